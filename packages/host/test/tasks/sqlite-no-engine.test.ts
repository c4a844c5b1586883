import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/** One person on SQLite runs the in-process queue: the shared deployment's job engine is never loaded. */

const home = mkdtempSync(join(tmpdir(), 'fengyu-no-engine-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('single host on SQLite', () => {
  it('composes the whole host without loading pg-boss', async () => {
    const probe = join(import.meta.dirname, '../support/engine-probe.ts');
    const { FENGYU_DATABASE_URL: _, ...env } = process.env;
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', probe, home], { env, timeout: 120_000 });
    expect(JSON.parse(stdout.trim().split('\n').at(-1) as string)).toEqual({ whileRunning: false, afterImport: true });
  }, 150_000);
});
