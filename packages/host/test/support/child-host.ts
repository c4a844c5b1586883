import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

/**
 * A real host in its own process (so a test can SIGKILL it), with the test tools, on a given
 * home. Every child started here is remembered; `killChildHosts` ends them all (call it in
 * `afterAll`).
 */

export interface ChildHost {
  url: string;
  token: string;
  child: ChildProcess;
}

const fixture = join(import.meta.dirname, 'serve-fixture.ts');
const started: ChildProcess[] = [];

/** `env`: added to this process's environment (e.g. FENGYU_CRASH_AT). */
export function startChildHost(home: string, env: Record<string, string> = {}): Promise<ChildHost> {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, home], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  started.push(child);
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stdout?.on('data', (d) => {
      buf += d;
      const line = buf.split('\n')[0];
      if (buf.includes('\n') && line) resolve({ ...JSON.parse(line), child });
    });
    child.on('exit', (code, signal) => reject(new Error(`fixture exited ${code ?? signal}`)));
  });
}

export function killChildHosts(): void {
  for (const c of started.splice(0)) c.kill('SIGKILL');
}

/** One JSON call with the host's token. */
export async function childApi(h: { url: string; token: string }, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  const res = await fetch(`${h.url}${path}`, { method, headers: { 'x-fengyu-token': h.token, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.status, body: (await res.json()) as any };
}
