import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresAvailable, startPostgres, type TestPostgres } from '../support/postgres';

const root = join(import.meta.dirname, '../../../..');
const homes: string[] = [];
let server: TestPostgres | undefined;
afterAll(async () => {
  for (const h of homes) rmSync(h, { recursive: true, force: true });
  await server?.stop();
});

function fengyu(args: string[], env: Record<string, string> = {}): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const home = mkdtempSync(join(tmpdir(), 'fengyu-cli-ops-'));
  homes.push(home);
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, 'bin/fengyu.mjs'), ...args], { cwd: root, env: { ...process.env, FENGYU_HOME: home, FENGYU_LOG_LEVEL: 'silent', ...env } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

describe('fengyu migrate / doctor', () => {
  it('on SQLite: doctor names the pending migrations, migrate applies them once, doctor is then ready', async () => {
    const home = mkdtempSync(join(tmpdir(), 'fengyu-cli-ops-'));
    homes.push(home);
    const env = { FENGYU_HOME: home };
    const before = await fengyu(['doctor'], env);
    expect(before.status).toBe(1);
    expect(before.stdout).toMatch(/^error\s+migrations\s+\d+ pending \(001-core/m);
    expect(before.stdout).toMatch(/fengyu migrate/);
    const check = await fengyu(['migrate', '--check'], env);
    expect(check.status).toBe(1);
    const applied = await fengyu(['migrate'], env);
    expect(applied.status, applied.stderr).toBe(0);
    expect(applied.stdout).toMatch(/applied 001-core, /);
    const again = await fengyu(['migrate'], env);
    expect(again.stdout).toMatch(/up to date/);
    const after = await fengyu(['doctor'], env);
    expect(after.status, after.stdout).toBe(0);
    expect(after.stdout).toMatch(/^ok\s+migrations\s+schema up to date/m);
    expect(after.stdout).toMatch(/^(ok|missing)\s+sandbox/m);
    expect(after.stdout).toMatch(/^(ok|missing)\s+chromium/m);
    expect(after.stdout).toMatch(/^ok\s+installed plugins/m);
  }, 120_000);

  it('refuses a database URL that is not PostgreSQL, naming the variable, and reports an unreachable server', async () => {
    const bad = await fengyu(['doctor'], { FENGYU_DATABASE_URL: 'mysql://x' });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/FENGYU_DATABASE_URL/);
    const down = await fengyu(['doctor'], { FENGYU_DATABASE_URL: 'postgres://fy:secret-pw@127.0.0.1:1/none' });
    expect(down.status).toBe(1);
    expect(down.stdout).toMatch(/^error\s+database\s+PostgreSQL 127\.0\.0\.1:1\/none/m);
    expect(down.stdout).not.toMatch(/secret-pw/);
  }, 120_000);

  it.skipIf(!postgresAvailable())('on PostgreSQL: migrate applies the same migrations; doctor reports the server version', async () => {
    server = await startPostgres();
    const url = await server.createDatabase();
    const applied = await fengyu(['migrate'], { FENGYU_DATABASE_URL: url });
    expect(applied.status, applied.stderr).toBe(0);
    expect(applied.stdout).toMatch(/^PostgreSQL 127\.0\.0\.1:\d+\/\w+: applied 001-core, /m);
    const doctor = await fengyu(['doctor'], { FENGYU_DATABASE_URL: url });
    expect(doctor.stdout).toMatch(/^ok\s+database\s+PostgreSQL .*\(PostgreSQL \d+/m);
    expect(doctor.stdout).toMatch(/^ok\s+migrations/m);
  }, 120_000);
});
