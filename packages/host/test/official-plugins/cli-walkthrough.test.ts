import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { attachmentsOf } from '../../../plugins/email/test/smtp-fixture';
import { officialBundleDirs } from './bundles';

/**
 * The walkthrough's command-line path (docs/walkthrough-excel-email.md), as a newcomer types it:
 * generate the sample workbook, write the run request, `fengyu run … --yes` against a fresh home
 * (the bundled plugins install themselves), and find one .eml per region in the local outbox.
 */

const root = join(import.meta.dirname, '../../../..');
const home = mkdtempSync(join(tmpdir(), 'fengyu-walkthrough-'));
const tsx = join(root, 'node_modules/.bin/tsx');

beforeAll(async () => {
  await officialBundleDirs();
}, 240_000);
afterAll(() => rmSync(home, { recursive: true, force: true }));

describe('walkthrough: fengyu run with the sample invoices', () => {
  it('splits examples-style invoices by Region and writes one .eml per region', () => {
    const book = join(home, 'invoices.xlsx');
    execFileSync(tsx, [join(root, 'examples/make-invoices.ts'), book, '60'], { cwd: root });
    const request = execFileSync(tsx, [join(root, 'examples/invoices/make-run-request.ts'), '--workbook', book, '--recipients', 'you@example.com'], { cwd: root, encoding: 'utf8' });
    const file = join(home, 'split-email.json');
    writeFileSync(file, request);
    const r = spawnSync(process.execPath, [join(root, 'bin/fengyu.mjs'), 'run', file, '--yes'], {
      cwd: root,
      env: { ...process.env, FENGYU_HOME: home, FENGYU_LOG_LEVEL: 'silent', FENGYU_SANDBOX: 'off' },
      encoding: 'utf8',
      timeout: 120_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ success: true, sent: 4 });
    const outbox = join(home, 'plugin-data/fan.summer.email/outbox');
    const eml = readdirSync(outbox);
    expect(eml).toHaveLength(4);
    const names = eml.map((f) => attachmentsOf(readFileSync(join(outbox, f)))[0]?.filename).sort();
    expect(names).toEqual(['invoices-East.xlsx', 'invoices-North.xlsx', 'invoices-South.xlsx', 'invoices-West.xlsx']);
  });
});
