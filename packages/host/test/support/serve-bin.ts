import { type ChildProcess, spawn } from 'node:child_process';
import { join } from 'node:path';

/**
 * `fengyu serve` as `npm start` runs it (bin/fengyu.mjs: the compiled host when built, else the
 * sources through tsx, as in CI), on a free port and a given home, for tests that kill it.
 */

const root = join(import.meta.dirname, '../../../..');

/**
 * How long a boot may take until the host prints its URL. Through tsx a boot took 6–17 s at load
 * 11 (tsx's cache cold or warm): a test that boots twice budgets its boots apart from its checks,
 * so a loaded machine fails no check that did not itself wait too long.
 */
export const BOOT_MS = 90_000;

export interface Served {
  child: ChildProcess;
  base: string;
  token: string;
}

/** Starts the host; resolves once it prints its URL, rejects if it exits first or takes past `BOOT_MS`. */
export async function serveBin(home: string, started: ChildProcess[]): Promise<Served> {
  const child = spawn(process.execPath, [join(root, 'bin/fengyu.mjs'), 'serve', '--port', '0', '--home', home], {
    cwd: root,
    env: { ...process.env, FENGYU_LOG_LEVEL: 'silent', FENGYU_SANDBOX: 'auto' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  started.push(child);
  let out = '';
  child.stdout?.setEncoding('utf8').on('data', (c: string) => (out += c));
  let timer: NodeJS.Timeout | undefined;
  const m = await new Promise<RegExpMatchArray>((resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`serve printed no URL in ${BOOT_MS} ms: ${out}`)), BOOT_MS);
    child.stdout?.on('data', () => {
      const hit = out.match(/(http:\/\/127\.0\.0\.1:\d+)\/#token=(\S+)/);
      if (hit) resolve(hit);
    });
    child.on('exit', () => reject(new Error(`serve exited: ${out}`)));
  }).finally(() => clearTimeout(timer));
  return { child, base: m[1] as string, token: m[2] as string };
}
