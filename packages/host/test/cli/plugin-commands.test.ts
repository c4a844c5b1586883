import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../../../..');
const home = mkdtempSync(join(tmpdir(), 'fengyu-cli-plugin-'));
const out = mkdtempSync(join(tmpdir(), 'fengyu-cli-fyp-'));
afterAll(() => {
  rmSync(home, { recursive: true, force: true });
  rmSync(out, { recursive: true, force: true });
});

function fengyu(args: string[]) {
  return spawnSync(process.execPath, [join(root, 'bin/fengyu.mjs'), ...args], { cwd: root, env: { ...process.env, FENGYU_HOME: home, FENGYU_LOG_LEVEL: 'silent', FENGYU_SANDBOX: 'off' }, encoding: 'utf8', timeout: 90_000 });
}

describe('fengyu plugin pack / install', () => {
  it('packs the example plugin, installs it into the home, and refuses the same version again', () => {
    const fyp = join(out, 'hello.fyp');
    const packed = fengyu(['plugin', 'pack', 'examples/hello-plugin', '-o', fyp]);
    expect(packed.status, packed.stderr).toBe(0);
    expect(packed.stdout).toMatch(/Packed \S+ \S+ →/);
    expect(existsSync(fyp)).toBe(true);
    const installed = fengyu(['plugin', 'install', fyp]);
    expect(installed.status, installed.stderr).toBe(0);
    expect(installed.stdout).toMatch(/Installed \S+ \d+\.\d+\.\d+/);
    const again = fengyu(['plugin', 'install', fyp]);
    expect(again.status).toBe(1);
    expect(again.stderr).toMatch(/plugin_version_not_higher/);
    const missing = fengyu(['plugin', 'pack', join(out, 'no-such-dir')]);
    expect(missing.status).toBe(1);
  }, 120_000);
});
