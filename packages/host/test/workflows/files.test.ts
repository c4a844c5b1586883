import { existsSync, mkdtempSync, symlinkSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_OWNER } from '../../src/http/auth';
import { FIXTURE, packProbe } from '../plugins/helpers';
import { auto, startTestHost, type TestHost } from '../support/host';

/**
 * Run-time pickers with real plugins (the probe fixture installed twice under two ids, real
 * worker processes, the host's sandbox): a shared directory written by one plugin and read by
 * another in one run, an uploaded file input reaching a worker as a resolved path, and enum
 * options from a plugin tool.
 */

let t: TestHost;

/** The probe under another id, its tools renamed (`probe_*` → `reader_*`). */
function readerManifest() {
  const m = JSON.parse(readFileSync(join(FIXTURE, 'manifest.json'), 'utf8')) as { aiTools: Array<{ name: string }> };
  return { id: 'test.fengyu.reader', name: 'Reader', aiTools: m.aiTools.map((a) => ({ ...a, name: a.name.replace(/^probe_/, 'reader_') })) };
}

async function runToEnd(id: string, body: Record<string, unknown>) {
  const res = await t.api('POST', `/api/workflows/${id}/run`, body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  await t.stream(res.body.runId);
  return (await t.api('GET', `/api/agent/runs/${res.body.runId}`)).body;
}

const exec = (run: any, stepId: string) => run.executions.find((e: any) => e.stepId === stepId);

beforeAll(async () => {
  const [probe, reader] = await Promise.all([packProbe(), packProbe(readerManifest())]);
  t = await startTestHost({ sandbox: 'auto' });
  for (const file of [probe, reader]) {
    const res = await t.upload('/api/plugins', readFileSync(file), 'plugin.fyp');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  }
}, 120_000);
afterAll(async () => {
  await t?.close();
});

describe('workflow file inputs with plugins', () => {
  it('mints a shared directory one plugin writes and another reads in the same run', async () => {
    const def = await t.api('POST', '/api/workflows', {
      name: 'Hand-off',
      inputSchema: { type: 'object', required: ['text'], properties: { text: { type: 'string' }, out: { type: 'string', 'x-fengyu-auto': 'shared-directory' } } },
      plan: {
        steps: [
          { id: 'write', tool: 'probe_write', arguments: { directory: '@file:out', name: 'part.txt', text: 'part: {{inputs.text}}' } },
          { id: 'read', tool: 'reader_read', dependsOn: ['write'], arguments: { path: '{{node.write.result.path}}' } },
        ],
      },
    });
    expect(def.status, JSON.stringify(def.body)).toBe(200);
    const run = await runToEnd(def.body.id, { inputs: { text: 'north' }, config: auto });
    expect(run.status, JSON.stringify(run.events?.at(-1))).toBe('completed');
    expect(run.sandbox).toEqual(t.host.ctx.posture());
    expect(exec(run, 'read').result).toEqual({ text: 'part: north' });
    const written = exec(run, 'write').result.path as string;
    expect(written).toContain(join('runs', run.id, 'shared', 'out'));
    // the file is downloadable by the run's owner, from the run's own folders only
    const file = (path: string, runId = run.id, headers: Record<string, string> = {}) => fetch(`${t.host.url}/api/agent/runs/${runId}/output-file?path=${encodeURIComponent(path)}`, { headers: { 'x-fengyu-token': t.host.token, ...headers } });
    const got = await file(written);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-disposition')).toContain('attachment');
    expect(await got.text()).toBe('part: north');
    symlinkSync(join(t.host.ctx.config.home, 'token'), join(written, '..', 'escape.txt'));
    for (const outside of [join(t.host.ctx.config.home, 'token'), join(written, '..', 'escape.txt'), join(written, '..'), join(written, '..', 'missing.txt')]) {
      const res = await file(outside);
      expect(res.status, outside).toBe(404);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('run_output_not_found');
    }
    const bob = await t.api('POST', '/api/owners', { name: 'bob' });
    expect((await file(written, run.id, { 'x-fengyu-token': bob.body.token })).status).toBe(404);
    // the model's tool does not ask for the automatic folder
    await t.api('POST', `/api/workflows/${def.body.id}/publish`, { revision: 1 });
    const tools = (await t.api('GET', '/api/agent/tools')).body as Array<{ name: string; inputSchema: { properties: object } }>;
    const tool = tools.find((x) => x.name === `run_workflow_${def.body.id}`);
    expect(Object.keys(tool?.inputSchema.properties ?? {})).toEqual(['text']);
  });

  it("lets the run's owner download a file a plugin's own step reported inside that plugin's data folder, and nothing else", async () => {
    const probeId = (JSON.parse(readFileSync(join(FIXTURE, 'manifest.json'), 'utf8')) as { id: string }).id;
    const outbox = join(t.host.ctx.plugins.service.dataDirOf(probeId), 'outbox');
    const def = await t.api('POST', '/api/workflows', {
      name: 'Outbox',
      inputSchema: { type: 'object', properties: {} },
      plan: {
        steps: [
          { id: 'mine', tool: 'probe_write_data', arguments: { name: 'm-000.eml', text: 'Subject: hi' } },
          { id: 'link', tool: 'probe_write_data', arguments: { name: 'link.eml', text: 'replaced by a symlink below' } },
        ],
      },
    });
    expect(def.status, JSON.stringify(def.body)).toBe(200);
    const run = await runToEnd(def.body.id, { inputs: {}, config: auto });
    expect(run.status, JSON.stringify(run.events?.at(-1))).toBe('completed');
    const eml = exec(run, 'mine').result.file.path as string;
    expect(realpathSync(eml)).toBe(realpathSync(join(outbox, 'm-000.eml')));
    const file = (path: string, runId = run.id, headers: Record<string, string> = {}) => fetch(`${t.host.url}/api/agent/runs/${runId}/output-file?path=${encodeURIComponent(path)}`, { headers: { 'x-fengyu-token': t.host.token, ...headers } });
    const got = await file(eml);
    expect(got.status).toBe(200);
    expect(got.headers.get('content-disposition')).toContain('m-000.eml');
    expect(await got.text()).toBe('Subject: hi');
    // hostile: a reported file turned into a link out of the folder; a file no step reported
    const link = exec(run, 'link').result.file.path as string;
    rmSync(link);
    symlinkSync(join(t.host.ctx.config.home, 'token'), link);
    writeFileSync(join(outbox, 'unreported.eml'), 'x');
    for (const refused of [link, join(outbox, 'unreported.eml'), join(t.host.ctx.config.home, 'token')]) expect((await file(refused)).status, refused).toBe(404);
    // another run of the same owner, which reported nothing; another owner
    const quiet = await t.api('POST', '/api/workflows', { name: 'Quiet', inputSchema: { type: 'object', properties: {} }, plan: { steps: [{ id: 'say', tool: 'probe_echo', arguments: { value: 'x' } }] } });
    const nothing = await runToEnd(quiet.body.id, { inputs: {}, config: auto });
    expect((await file(eml, nothing.id)).status).toBe(404);
    const bob = await t.api('POST', '/api/owners', { name: 'bob-outbox' });
    expect((await file(eml, run.id, { 'x-fengyu-token': bob.body.token })).status).toBe(404);
  });

  it('accepts an upload with a long non-ASCII name, shortened to fit the file system, extension kept', async () => {
    for (const name of [`${'报表'.repeat(120)}.xlsx`, `${'😀'.repeat(100)}.csv`, '名'.repeat(300)]) {
      const ref = await t.upload('/api/files', Buffer.from('x'), name);
      expect(ref.status, JSON.stringify(ref.body)).toBe(201);
      expect(JSON.stringify(ref.body)).not.toContain('ENAMETOOLONG');
      expect(Buffer.byteLength(ref.body.name)).toBeLessThanOrEqual(200);
      expect(name.endsWith('.xlsx') ? ref.body.name.endsWith('.xlsx') : true).toBe(true);
    }
  });

  it('binds an uploaded file input as @file:<input>, resolved to a path for the worker', async () => {
    const ref = await t.upload('/api/files', Buffer.from('rows,1,2\n'), 'sheet.csv');
    expect(ref.status).toBe(201);
    const def = await t.api('POST', '/api/workflows', {
      name: 'Read upload',
      inputSchema: { type: 'object', required: ['sheet'], properties: { sheet: { type: 'string', format: 'fengyu-file' } } },
      plan: {
        steps: [
          { id: 'where', tool: 'probe_echo', arguments: { value: '@file:sheet' } },
          { id: 'read', tool: 'reader_read', arguments: { path: '@file:sheet' } },
        ],
      },
    });
    expect(def.status, JSON.stringify(def.body)).toBe(200);
    const run = await runToEnd(def.body.id, { inputs: {}, files: [{ name: 'sheet', refs: [ref.body] }], config: auto });
    expect(run.status, JSON.stringify(run.events?.at(-1))).toBe('completed');
    expect(exec(run, 'read').result).toEqual({ text: 'rows,1,2\n' });
    const path = exec(run, 'where').result.value as string;
    expect(path.startsWith('/')).toBe(true);
    expect(path).toContain(`${ref.body.id}/sheet.csv`);
    // without the file: named before the run starts
    const missing = await t.api('POST', `/api/workflows/${def.body.id}/run`, { inputs: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details[0]).toMatchObject({ code: 'input_missing', field: 'sheet' });
    // a FileRef of nobody's: refused by the grant resolver, nothing runs
    const bogus = await t.api('POST', `/api/workflows/${def.body.id}/run`, { inputs: {}, files: [{ name: 'sheet', refs: ['not-a-file'] }] });
    expect(bogus.status).toBe(400);
  });

  it('carries an upload into a background task and keeps one with a schedule until it is deleted', async () => {
    const ref = await t.upload('/api/files', Buffer.from('north,1\n'), 'book.csv');
    const def = await t.api('POST', '/api/workflows', {
      name: 'Read in background',
      inputSchema: { type: 'object', required: ['book'], properties: { book: { type: 'string', format: 'fengyu-file', title: 'Workbook' } } },
      plan: { steps: [{ id: 'read', tool: 'reader_read', arguments: { path: '@file:book' } }] },
    });
    expect((await t.api('POST', `/api/workflows/${def.body.id}/publish`, { revision: 1 })).status).toBe(200);
    const output = async (taskId: string) => (await t.api('GET', `/api/agent/tasks/${taskId}/output?timeoutMs=30000`)).body;
    // a background task: the upload reaches the run
    const task = await t.api('POST', '/api/agent/tasks', { workflowId: def.body.id, files: [{ name: 'book', refs: [ref.body] }], permissionMode: 'full-access' });
    expect(task.status, JSON.stringify(task.body)).toBe(202);
    const done = await output(task.body.id);
    expect(done.state, JSON.stringify(done)).toBe('completed');
    expect(done.output.text).toContain('north,1');
    // without the file, or with another name or nobody's upload: refused at submission, naming it
    const none = await t.api('POST', '/api/agent/tasks', { workflowId: def.body.id, permissionMode: 'full-access' });
    expect(none.status).toBe(400);
    expect(none.body.error).toMatchObject({ code: 'input_file_missing' });
    expect(none.body.error.message).toContain('Workbook');
    const wrong = await t.api('POST', '/api/agent/tasks', { workflowId: def.body.id, files: [{ name: 'other', refs: [ref.body.id] }, { name: 'book', refs: ['nope'] }] });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.details.map((p: { code: string }) => p.code)).toEqual(['files_not_file_input', 'files_unknown_ref']);
    // a schedule keeps its own copy and grants it to the fire
    const missing = await t.api('POST', '/api/agent/schedules', { workflowId: def.body.id, permissionMode: 'full-access', recurrence: { kind: 'interval', everySeconds: 3600 } }, { 'accept-language': 'zh-CN' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('input_file_missing');
    expect(missing.body.error.message).toContain('上传');
    const sch = await t.api('POST', '/api/agent/schedules', { workflowId: def.body.id, permissionMode: 'full-access', runImmediately: true, files: [{ name: 'book', refs: [ref.body.id] }], recurrence: { kind: 'interval', everySeconds: 3600 } });
    expect(sch.status, JSON.stringify(sch.body)).toBe(201);
    const kept = sch.body.files[0].refs[0];
    expect(sch.body.files[0].name).toBe('book');
    expect(kept).toMatchObject({ name: 'book.csv', size: 8 });
    expect(kept.id).not.toBe(ref.body.id);
    const keptRow = await t.host.ctx.db.withTables<{ files: { id: string; path: string } }>().selectFrom('files').selectAll().where('id', '=', kept.id).executeTakeFirstOrThrow();
    expect(readFileSync(keptRow.path, 'utf8')).toBe('north,1\n');
    const fired = (await t.api('GET', `/api/agent/schedules/${sch.body.id}`)).body;
    const firedTask = await output(fired.lastTaskId);
    expect(firedTask.state, JSON.stringify(firedTask)).toBe('completed');
    expect(firedTask.output.text).toContain('north,1');
    // deleting the schedule releases its copy; the upload itself stays
    expect((await t.api('DELETE', `/api/agent/schedules/${sch.body.id}`)).status).toBe(200);
    expect(existsSync(keptRow.path)).toBe(false);
    expect(await t.host.ctx.db.withTables<{ files: { id: string } }>().selectFrom('files').select('id').where('id', 'in', [kept.id, ref.body.id]).execute()).toEqual([{ id: ref.body.id }]);
  });

  it("lets the model's task_submit_workflow and task_schedule carry an upload, and refuses them without it", async () => {
    const ref = await t.upload('/api/files', Buffer.from('south,2\n'), 'book.csv');
    const def = await t.api('POST', '/api/workflows', {
      name: 'Read for the model',
      inputSchema: { type: 'object', required: ['book'], properties: { book: { type: 'string', format: 'fengyu-file', title: 'Workbook' } } },
      plan: { steps: [{ id: 'read', tool: 'reader_read', arguments: { path: '@file:book' } }] },
    });
    expect((await t.api('POST', `/api/workflows/${def.body.id}/publish`, { revision: 1 })).status).toBe(200);
    const files = [{ name: 'book', refs: [{ id: ref.body.id }] }];
    const recurrence = { kind: 'interval', everySeconds: 3600 };
    const plan = async (steps: unknown[]) => {
      const res = await t.api('POST', '/api/agent/run', { config: { planApproval: false, permissionMode: 'full-access' }, workflow: { steps } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const events = await t.stream(res.body.runId);
      return { end: events.at(-1), steps: Object.fromEntries(events.filter((e) => e.type === 'step_complete').map((e) => [e.data.stepId, e.data.result])) };
    };
    const ok = await plan([
      { id: 'submit', tool: 'task_submit_workflow', arguments: { workflowId: def.body.id, files } },
      { id: 'out', tool: 'task_output', dependsOn: ['submit'], arguments: { taskId: '{{node.submit.result.taskId}}', timeoutMs: 30000 } },
      { id: 'schedule', tool: 'task_schedule', arguments: { workflowId: def.body.id, permissionMode: 'full-access', files, recurrence } },
    ]);
    expect(ok.end?.type, JSON.stringify(ok.end?.data)).toBe('complete');
    expect(ok.steps.out).toMatchObject({ state: 'completed' });
    expect(ok.steps.out.output.text).toContain('south,2');
    expect(ok.steps.schedule.schedule.files[0]).toMatchObject({ name: 'book', refs: [{ name: 'book.csv' }] });
    expect((await t.api('DELETE', `/api/agent/schedules/${ok.steps.schedule.scheduleId}`)).status).toBe(200);
    // without the file: each tool fails naming the input, before anything is queued or saved
    for (const step of [
      { id: 'submit', tool: 'task_submit_workflow', arguments: { workflowId: def.body.id } },
      { id: 'schedule', tool: 'task_schedule', arguments: { workflowId: def.body.id, permissionMode: 'full-access', recurrence } },
    ]) {
      const bad = await plan([step]);
      expect(bad.end?.type, step.tool).toBe('error');
      expect(String(bad.end?.data.message), step.tool).toContain('Workbook');
    }
  });

  it('refuses before any run a writing step whose folder is missing or is an uploaded file, in plain words', async () => {
    const inputSchema = { type: 'object', properties: { sheet: { type: 'string', format: 'fengyu-file' }, out: { type: 'string', 'x-fengyu-auto': 'shared-directory' } } };
    const def = (args: Record<string, unknown>) => ({ name: 'Writes', inputSchema, plan: { steps: [{ id: 'w', title: 'Save the part', tool: 'probe_write', arguments: { name: 'p.txt', text: 'x', ...args } }] } });
    const missing = await t.api('POST', '/api/workflows', def({}), { 'accept-language': 'zh-CN' });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('workflow_invalid');
    expect(missing.body.error.details).toEqual([expect.objectContaining({ code: 'step_folder_missing', stepId: 'w', field: 'arguments.directory' })]);
    expect(missing.body.error.details[0].message).toContain('“Save the part”');
    expect(missing.body.error.details[0].message).toContain('文件夹（每次运行时创建）');
    const wrong = await t.api('POST', '/api/workflows', def({ directory: '@file:sheet' }));
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.details.map((p: { code: string }) => p.code)).toEqual(['step_folder_not_folder']);
    // a folder created per run is what it takes
    const ok = await t.api('POST', '/api/workflows', def({ directory: '@file:out' }));
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it('lists enum options through a plugin tool', async () => {
    const def = await t.api('POST', '/api/workflows', {
      name: 'Pick',
      inputSchema: {
        type: 'object',
        properties: {
          account: { type: 'integer', 'x-fengyu-enum': { tool: 'reader_echo', arguments: { accounts: [{ id: 1, label: 'alice@example.com' }, { id: 2, label: 'bob@example.com' }] }, itemsPath: 'accounts' } },
          unsafe: { type: 'string', 'x-fengyu-enum': 'probe_write' },
        },
      },
      plan: { steps: [{ id: 'a', tool: 'probe_echo', arguments: { value: '{{inputs.account}}' } }] },
    });
    expect(def.status, JSON.stringify(def.body)).toBe(200);
    const res = await t.api('GET', `/api/workflows/${def.body.id}/inputs/account/options`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.options).toEqual([
      { value: 1, label: 'alice@example.com' },
      { value: 2, label: 'bob@example.com' },
    ]);
    expect((await t.api('GET', `/api/workflows/${def.body.id}/inputs/unsafe/options`)).status).toBe(409);
  });

  it('passes a file the outer call holds to the workflow tool by grant name', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'fengyu-wf-grant-'));
    const book = join(dir, 'book.txt');
    writeFileSync(book, 'chapter one');
    const def = await t.api('POST', '/api/workflows', {
      name: 'Read a file',
      inputSchema: { type: 'object', required: ['doc'], properties: { doc: { type: 'string', format: 'fengyu-file' } } },
      plan: { steps: [{ id: 'read', tool: 'reader_read', arguments: { path: '@file:doc' } }] },
    });
    await t.api('POST', `/api/workflows/${def.body.id}/publish`, { revision: 1 });
    const tool = (await t.host.ctx.catalog.snapshot(DEFAULT_OWNER)).get(`run_workflow_${def.body.id}`);
    const grants = [{ name: 'attachment', path: realpathSync(book), kind: 'file' as const, access: 'read' as const }];
    const ctx = { signal: new AbortController().signal, owner: DEFAULT_OWNER, permissionMode: 'full-access' as const, grants };
    expect(await tool?.invoke({ doc: 'attachment' }, ctx)).toEqual({ text: 'chapter one' });
    const missing = await tool?.invoke({}, { ...ctx, grants: [] }).then(
      () => undefined,
      (e) => e,
    );
    expect(String(missing?.params.reason)).toContain('doc');
    rmSync(dir, { recursive: true, force: true });
  });
});
