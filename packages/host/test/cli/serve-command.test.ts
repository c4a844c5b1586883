import { spawn } from 'node:child_process';
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../../../..');
const home = mkdtempSync(join(tmpdir(), 'fengyu-serve-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('fengyu serve', () => {
  it('starts the host on loopback, prints the UI address with its token, and stops on SIGTERM', async () => {
    const child = spawn(process.execPath, [join(root, 'bin/fengyu.mjs'), 'serve', '--port', '0', '--home', home], {
      cwd: root,
      env: { ...process.env, FENGYU_LOG_LEVEL: 'silent', FENGYU_SANDBOX: 'off', FENGYU_START_TRACE: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const ui = await new Promise<RegExpMatchArray>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`serve printed: ${out}`)), 60_000);
        child.stdout.on('data', () => {
          const m = out.match(/(http:\/\/127\.0\.0\.1:(\d+))\/#token=(\S+)/);
          if (m) {
            clearTimeout(timer);
            resolve(m);
          }
        });
        child.on('exit', () => reject(new Error(`serve exited: ${out}`)));
      });
      const [, base, port, token] = ui as unknown as [string, string, string, string];
      expect(Number(port)).toBeGreaterThan(0);
      expect(JSON.parse(readFileSync(join(home, 'host.json'), 'utf8')).port).toBe(Number(port));
      const ok = await fetch(`${base}/api/agent/tools`, { headers: { 'x-fengyu-token': token } });
      expect(ok.status).toBe(200);
      const refused = await fetch(`${base}/api/agent/tools`);
      expect(refused.status).toBe(401);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    expect(out).toMatch(/SIGTERM: stopping/);
    expect(existsSync(join(home, 'host.json'))).toBe(false);
    // FENGYU_START_TRACE=1 (read by the config): where the start's time went, on stderr
    expect(err).toMatch(/fengyu start: code loaded at \d+ ms \(cpu \d+\), listening at \d+ ms \(cpu \d+\)/);
  }, 90_000);

  it('removes host.json on SIGINT, but leaves one another host has written since', async () => {
    const start = (h: string) => {
      const child = spawn(process.execPath, [join(root, 'bin/fengyu.mjs'), 'serve', '--port', '0', '--home', h], { cwd: root, env: { ...process.env, FENGYU_LOG_LEVEL: 'silent', FENGYU_SANDBOX: 'off' }, stdio: ['ignore', 'pipe', 'pipe'] });
      let out = '';
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const listening = new Promise<void>((resolve, reject) => {
        child.stdout.setEncoding('utf8').on('data', (c: string) => {
          out += c;
          if (/#token=/.test(out)) resolve();
        });
        child.on('exit', () => reject(new Error(`serve exited: ${out}`)));
      });
      return { child, exited, listening };
    };
    const own = start(home);
    await own.listening;
    expect(existsSync(join(home, 'host.json'))).toBe(true);
    own.child.kill('SIGINT');
    expect(await own.exited).toBe(0);
    expect(existsSync(join(home, 'host.json'))).toBe(false);

    const other = start(home);
    await other.listening;
    const foreign = JSON.stringify({ url: 'http://127.0.0.1:1', port: 1, pid: other.child.pid === 1 ? 2 : 1 });
    writeFileSync(join(home, 'host.json'), foreign);
    other.child.kill('SIGTERM');
    expect(await other.exited).toBe(0);
    expect(readFileSync(join(home, 'host.json'), 'utf8')).toBe(foreign);
  }, 120_000);
});

describe('fengyu serve --open', () => {
  it('opens the UI address with its token in the browser named by $BROWSER', async () => {
    const openHome = mkdtempSync(join(tmpdir(), 'fengyu-open-'));
    const record = join(openHome, 'opened.txt');
    const opener = join(openHome, 'fake-browser.sh');
    writeFileSync(opener, `#!/bin/sh\nprintf '%s' "$1" > '${record}'\n`);
    chmodSync(opener, 0o755);
    const child = spawn(process.execPath, [join(root, 'bin/fengyu.mjs'), 'serve', '--port', '0', '--home', openHome, '--open'], {
      cwd: root,
      env: { ...process.env, FENGYU_LOG_LEVEL: 'silent', FENGYU_SANDBOX: 'off', BROWSER: opener },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    try {
      const opened = await new Promise<string>((resolve, reject) => {
        const poll = setInterval(() => {
          if (existsSync(record) && readFileSync(record, 'utf8').length > 0) {
            clearInterval(poll);
            resolve(readFileSync(record, 'utf8'));
          }
        }, 50);
        child.on('exit', () => {
          clearInterval(poll);
          reject(new Error(`serve exited: ${out}`));
        });
      });
      const printed = out.match(/Open the web UI: (\S+)/)?.[1];
      expect(opened).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/#token=\S+$/);
      expect(opened).toBe(printed);
    } finally {
      child.kill('SIGTERM');
      await exited;
      rmSync(openHome, { recursive: true, force: true });
    }
  }, 90_000);

  it('an idle host gives its heap back: the start is a burst, and once quiet the heap shrinks', async () => {
    const idleHome = mkdtempSync(join(tmpdir(), 'fengyu-serve-idle-'));
    // a probe preloaded into the host: on SIGWINCH it appends process.memoryUsage() to a file
    const probe = join(idleHome, 'probe.cjs');
    const out = join(idleHome, 'memory.jsonl');
    writeFileSync(probe, `process.on('SIGWINCH', () => require('node:fs').appendFileSync(${JSON.stringify(out)}, JSON.stringify(process.memoryUsage()) + '\\n'));`);
    const child = spawn(process.execPath, [join(root, 'bin/fengyu.mjs'), 'serve', '--port', '0', '--home', idleHome], {
      cwd: root,
      // the release's tick at its least (200 ms): the same policy (2 quiet ticks, then 30) in 6.4 s instead of 32 s
      env: { ...process.env, FENGYU_LOG_LEVEL: 'silent', FENGYU_SANDBOX: 'off', NODE_OPTIONS: `--require ${probe}`, FENGYU_IDLE_RELEASE_TICK_MS: '200' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const heapTotal = async (): Promise<number> => {
      const before = existsSync(out) ? readFileSync(out, 'utf8').split('\n').filter(Boolean).length : 0;
      child.kill('SIGWINCH');
      for (;;) {
        const lines = existsSync(out) ? readFileSync(out, 'utf8').split('\n').filter(Boolean) : [];
        if (lines.length > before) return (JSON.parse(lines[lines.length - 1] as string) as { heapTotal: number }).heapTotal;
        await new Promise((r) => setTimeout(r, 20));
      }
    };
    try {
      let text = '';
      await new Promise<void>((resolve, reject) => {
        child.stdout.setEncoding('utf8').on('data', (c: string) => {
          text += c;
          if (/#token=/.test(text)) resolve();
        });
        child.on('exit', () => reject(new Error(`serve exited: ${text}`)));
      });
      const atStart = await heapTotal();
      // wait for the release (a collection after 2 quiet ticks, the young generation given back 30 ticks later)
      let now = atStart;
      for (let i = 0; i < 400 && now > atStart * 0.7; i++) {
        await new Promise((r) => setTimeout(r, 250));
        now = await heapTotal();
      }
      expect(now).toBeLessThan(atStart * 0.7);
    } finally {
      child.kill('SIGTERM');
      await exited;
      rmSync(idleHome, { recursive: true, force: true });
    }
  }, 150_000);
});
