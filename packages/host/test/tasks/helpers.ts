import { existsSync, readFileSync } from 'node:fs';
import { expect } from 'vitest';
import type { TestHost } from '../support/host';

/** Creates and publishes a workflow whose one step runs `command` (inputs may be referenced). */
export async function publishCommand(t: TestHost, command: string, inputSchema: Record<string, unknown> = { type: 'object', properties: { dir: { type: 'string' } } }, name = 'cmd'): Promise<string> {
  const made = await t.api('POST', '/api/workflows', { name, inputSchema, plan: { steps: [{ id: 'run', tool: 'execute_command', arguments: { command } }] } });
  expect(made.status, JSON.stringify(made.body)).toBe(200);
  const pub = await t.api('POST', `/api/workflows/${made.body.id}/publish`, { revision: made.body.revision });
  expect(pub.status, JSON.stringify(pub.body)).toBe(200);
  return made.body.id as string;
}

/** Polls until `check` returns a value (no fixed sleeps: the condition decides). */
export async function until<T>(check: () => Promise<T | undefined | false> | T | undefined | false, what: string, timeoutMs = 20_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v !== undefined && v !== false) return v as T;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** True while a process exists and is not a zombie. */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  const stat = `/proc/${pid}/stat`;
  if (!existsSync(stat)) return true;
  try {
    const s = readFileSync(stat, 'utf8');
    return s.slice(s.lastIndexOf(')') + 2, s.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

export function pidsIn(file: string): number[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split(/\s+/)
    .filter(Boolean)
    .map(Number);
}
