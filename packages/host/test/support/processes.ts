import { readFileSync } from 'node:fs';

/** Helpers for tests about child processes: liveness by pid, waiting on conditions. */

export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie (exited, not yet reaped by its new parent) counts as gone.
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Polls `condition` every 25 ms until it holds or `timeoutMs` passes; returns the last answer. */
export async function waitUntil(condition: () => boolean, timeoutMs = 10_000): Promise<boolean> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    if (condition()) return true;
    if (Date.now() > end) return false;
    await new Promise((r) => setTimeout(r, 25));
  }
}

export function readPid(file: string): number {
  return Number(readFileSync(file, 'utf8').trim());
}
