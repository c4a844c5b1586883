import type { Page } from 'playwright-core';

/**
 * Waits until the page has painted its current state: web fonts loaded and two animation frames
 * rendered after that. Used before a screenshot or a text scan instead of a fixed delay; the
 * screenshot itself disables CSS animations.
 */
export async function settle(page: Page): Promise<void> {
  await page.evaluate(async () => {
    await document.fonts.ready;
    await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  });
}
