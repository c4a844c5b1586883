import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * `fengyu serve` runs the compiled host (dist/host) while it matches the sources — no TypeScript
 * loader at run time — and falls back to the sources when the build is stale.
 */

const root = join(import.meta.dirname, '../../../..');
const home = mkdtempSync(join(tmpdir(), 'fengyu-compiled-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('the compiled host', () => {
  it('serves from dist/host: migrations, domains and a run work, and a clean stop removes host.json', async () => {
    execFileSync(process.execPath, [join(root, 'scripts/build-host.mjs')], { cwd: root });
    const child = spawn(process.execPath, [join(root, 'bin/fengyu.mjs'), 'serve', '--port', '0', '--home', home], {
      cwd: root,
      env: { ...process.env, FENGYU_LOG_LEVEL: 'silent', FENGYU_SANDBOX: 'off', FENGYU_REPORT_ENTRY: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const [, base, token] = await new Promise<string[]>((resolve, reject) => {
        child.stdout.on('data', () => {
          const m = out.match(/(http:\/\/127\.0\.0\.1:\d+)\/#token=(\S+)/);
          if (m) resolve([...m]);
        });
        child.on('exit', () => reject(new Error(`serve exited: ${out} ${err}`)));
      });
      expect(err).toMatch(/fengyu entry: compiled/);
      const headers = { 'x-fengyu-token': token as string, 'content-type': 'application/json' };
      const started = await fetch(`${base}/api/agent/run`, { method: 'POST', headers, body: JSON.stringify({ workflow: { steps: [{ id: 'a', tool: 'task_capacity' }] }, config: { planApproval: false, permissionMode: 'full-access' } }) });
      expect(started.status).toBe(200);
      const { runId } = (await started.json()) as { runId: string };
      for (;;) {
        const detail = (await (await fetch(`${base}/api/agent/runs/${runId}`, { headers })).json()) as { status: string };
        if (detail.status === 'completed') break;
        expect(['running', 'planning']).toContain(detail.status);
        await new Promise((r) => setImmediate(r));
      }
      expect(existsSync(join(home, 'host.json'))).toBe(true);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(existsSync(join(home, 'host.json'))).toBe(false);
  }, 180_000);

  it('falls back to the TypeScript sources when the build no longer matches them', () => {
    const stampFile = join(root, 'dist/host/stamp');
    const stamp = readFileSync(stampFile, 'utf8');
    try {
      writeFileSync(stampFile, 'stale');
      const r = spawnSyncText(['--version']);
      expect(r).toMatch(/fengyu entry: tsx/);
      expect(r).toMatch(/0\.1\.0/);
    } finally {
      writeFileSync(stampFile, stamp);
    }
  }, 120_000);
});

function spawnSyncText(args: string[]): string {
  const r = spawnSync(process.execPath, [join(root, 'bin/fengyu.mjs'), ...args], { cwd: root, env: { ...process.env, FENGYU_REPORT_ENTRY: '1' }, encoding: 'utf8' });
  return `${r.stdout}${r.stderr}`;
}
