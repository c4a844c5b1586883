/** Polls an (async) condition every 50 ms until it holds; throws when `ms` pass without it (no fixed sleeps). */
export async function waitUntil(check: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error('condition not reached');
}
