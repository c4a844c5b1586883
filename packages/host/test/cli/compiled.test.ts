import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { builtinModules } from 'node:module';
import { dirname, join } from 'node:path';
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

describe('the compiled build', () => {
  it('bundles the dependencies: its files import only Node built-ins, each other and the packages kept external', async () => {
    const { EXTERNAL } = (await import(join(root, 'scripts/build-host.mjs'))) as { EXTERNAL: string[] };
    const dir = join(root, 'dist/host');
    // the files of the current build: the entry, the migrations and every chunk they reach
    const files = [join(dir, 'fengyu.mjs'), ...readdirSync(join(dir, 'migrations')).filter((f) => f.endsWith('.mjs')).map((f) => join(dir, 'migrations', f))];
    const outside = new Set<string>();
    for (let i = 0; i < files.length; i++) {
      const f = files[i] as string;
      const text = readFileSync(f, 'utf8');
      for (const m of text.matchAll(/(?:^|\n)import\s[^;]*?from\s*"([^"]+)"|(?:^|\n)import\s*"([^"]+)"|\bimport\(\s*"([^"]+)"\s*\)|\b__require\(\s*"([^"]+)"\s*\)/g)) {
        const spec = (m[1] ?? m[2] ?? m[3] ?? m[4]) as string;
        if (spec.startsWith('.')) {
          const next = join(dirname(f), spec);
          if (!files.includes(next)) files.push(next);
          continue;
        }
        const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] as string);
        if (!spec.startsWith('node:') && !EXTERNAL.includes(name) && !isBuiltin(name)) outside.add(`${spec} in ${f}`);
      }
    }
    expect(files.length).toBeGreaterThan(10);
    expect([...outside]).toEqual([]);
  });

  it('is stale once package-lock.json changes (its dependencies are bundled into it), and only a source change or that makes it so', async () => {
    const { hostStamp, HOST_SOURCES } = (await import(join(root, 'scripts/host-stamp.mjs'))) as { hostStamp: (base?: string) => string; HOST_SOURCES: string[] };
    const repo = mkdtempSync(join(tmpdir(), 'fengyu-stamp-'));
    try {
      for (const p of HOST_SOURCES) {
        const file = p.includes('.') ? join(repo, p) : join(repo, p, 'a.ts');
        mkdirSync(dirname(file), { recursive: true });
        writeFileSync(file, 'x');
      }
      const first = hostStamp(repo);
      expect(hostStamp(repo)).toBe(first);
      writeFileSync(join(repo, 'packages/host/src/a.test.ts'), 'a test is not built');
      expect(hostStamp(repo)).toBe(first);
      const lock = join(repo, 'package-lock.json');
      utimesSync(lock, statSync(lock).atime, new Date(statSync(lock).mtimeMs + 5000));
      const second = hostStamp(repo);
      expect(second).not.toBe(first);
      writeFileSync(join(repo, 'packages/protocol/src/a.ts'), 'y');
      expect(hostStamp(repo)).not.toBe(second);
    } finally {
      rmSync(repo, { recursive: true, force: true });
    }
  });
});

function isBuiltin(name: string): boolean {
  return builtinModules.includes(name);
}

function spawnSyncText(args: string[]): string {
  const r = spawnSync(process.execPath, [join(root, 'bin/fengyu.mjs'), ...args], { cwd: root, env: { ...process.env, FENGYU_REPORT_ENTRY: '1' }, encoding: 'utf8' });
  return `${r.stdout}${r.stderr}`;
}
