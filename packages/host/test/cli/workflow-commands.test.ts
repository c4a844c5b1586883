import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';

/** `fengyu workflows export|import` against a live host (the CLI finds it through host.json). */

const root = join(import.meta.dirname, '../../../..');
const dir = mkdtempSync(join(tmpdir(), 'fengyu-cli-wf-'));
let t: TestHost;
beforeAll(async () => {
  t = await startTestHost();
});
afterAll(async () => {
  await t?.close();
  rmSync(dir, { recursive: true, force: true });
});

function fengyu(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [join(root, 'bin/fengyu.mjs'), ...args], { cwd: root, env: { ...process.env, FENGYU_HOME: t.home, FENGYU_LOG_LEVEL: 'silent' } });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

const plan = { steps: [{ id: 'only', tool: 'echo', arguments: { value: 'x' } }] };

describe('fengyu workflows', () => {
  it('exports one workflow to a file, imports it back as a draft, and exports all to stable files', async () => {
    const def = (await t.api('POST', '/api/workflows', { name: 'Nightly report', plan })).body;
    const file = join(dir, 'one.json');
    const out = await fengyu(['workflows', 'export', def.id, '-o', file]);
    expect(out.status, out.stderr).toBe(0);
    const doc = JSON.parse(readFileSync(file, 'utf8'));
    expect(doc).toMatchObject({ format: 'fengyu.workflow', name: 'Nightly report', plan });
    // keys sorted at every level
    expect(Object.keys(doc)).toEqual([...Object.keys(doc)].sort());

    const imp = await fengyu(['workflows', 'import', file]);
    expect(imp.status, imp.stderr).toBe(0);
    expect(imp.stdout).toContain('imported "Nightly report (2)" as draft');

    const all = join(dir, 'all');
    const first = await fengyu(['workflows', 'export', '--all', '--dir', all]);
    expect(first.status, first.stderr).toBe(0);
    const files = readdirSync(all).sort();
    expect(files).toContain(`nightly-report.${def.id}.fengyu.json`);
    expect(files).toHaveLength(2);
    const mtime = statSync(join(all, files[0] as string)).mtimeMs;
    // nothing changed: the files are left as they are (exportedAt alone never rewrites a file)
    const second = await fengyu(['workflows', 'export', '--all', '--dir', all]);
    expect(second.stdout).toContain('(0 file(s) changed)');
    expect(statSync(join(all, files[0] as string)).mtimeMs).toBe(mtime);
  }, 60_000);

  it('says what is wrong with a bad file or id, with a non-zero exit', async () => {
    const bad = join(dir, 'bad.json');
    writeFileSync(bad, '{"format":"fengyu.workflow","formatVersion":1}');
    const r = await fengyu(['workflows', 'import', bad]);
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('import_invalid');
    expect(r.stderr).toContain('"name"');
    const notJson = join(dir, 'x.json');
    writeFileSync(notJson, 'nope');
    expect((await fengyu(['workflows', 'import', notJson])).stderr).toContain('not a readable JSON file');
    const missing = await fengyu(['workflows', 'export', 'nosuchid']);
    expect(missing.status).toBe(1);
    expect(missing.stderr).toContain('workflow_not_found');
  }, 60_000);
});
