import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';
import { MINIMAL_MANIFEST, packProbe, zipEntries } from './helpers';

let t: TestHost;
let v1: string;
let v2: string;
const PROBE = 'test.fengyu.probe';

async function upload(path: string, body: Buffer | string, name = 'upload.bin') {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(typeof body === 'string' ? readFileSync(body) : body)]), name);
  const res = await fetch(`${t.host.url}${path}`, { method: 'POST', headers: { 'x-fengyu-token': t.host.token }, body: form });
  return { status: res.status, body: (await res.json()) as any };
}

const uploadPackage = (file: string) => upload('/api/plugins', file, 'plugin.fyp');

/** Runs a supplied workflow without gates and returns its final run record. */
async function runWorkflow(steps: unknown[], files?: unknown[]) {
  const started = await t.api('POST', '/api/agent/run', { goal: 'plugin test', workflow: { steps }, files, config: { planApproval: false, permissionMode: 'full-access' } });
  expect(started.status, JSON.stringify(started.body)).toBe(200);
  const runId = started.body.runId as string;
  await t.stream(runId);
  return (await t.api('GET', `/api/agent/runs/${runId}`)).body;
}

const stepResult = (run: any, id: string) => run.executions?.find((s: any) => s.stepId === id || s.id === id);

beforeAll(async () => {
  [v1, v2] = await Promise.all([packProbe(), packProbe({ version: '1.1.0' })]);
  t = await startTestHost({ sandbox: 'auto' });
});
afterAll(async () => {
  await t?.close();
});

describe('plugins over HTTP', () => {
  it('installs a .fyp upload and lists it with its tools and posture', async () => {
    expect((await t.api('GET', '/api/plugins')).body).toEqual([]);
    expect((await t.api('GET', '/api/plugins/manifest-schema')).body).toMatchObject({ type: 'object', required: expect.arrayContaining(['id', 'worker', 'rpc']) });
    const res = await uploadPackage(v1);
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(res.body).toMatchObject({ id: PROBE, version: '1.0.0', enabled: true, supportsAi: true, hooks: { present: false, trusted: false } });
    expect(res.body.tools.find((x: any) => x.name === 'probe_hang')).toMatchObject({ effect: 'read', timeoutSeconds: 1, id: `${PROBE}:probe_hang` });
    expect(res.body.sandbox).toEqual({ ...t.host.ctx.posture(), network: false });
    const tools = (await t.api('GET', '/api/agent/tools')).body as any[];
    const echo = tools.find((x) => x.name === 'probe_echo');
    expect(echo).toMatchObject({ source: 'plugin', id: `${PROBE}:probe_echo`, effect: 'read', idempotent: true, origin: PROBE });
    expect(echo.schemaRevision).toMatch(/^[0-9a-f]{8}$/);
  });

  it('runs a plugin tool in a supplied workflow', async () => {
    const run = await runWorkflow([{ id: 'a', tool: 'probe_echo', arguments: { value: 'hi' } }]);
    expect(run.status, JSON.stringify(run)).toBe('completed');
    expect(JSON.stringify(run)).toContain('"version":"1.0.0"');
    const tools = (run.events as Array<{ type: string; data?: any; [k: string]: any }>).filter((e) => e.type === 'tool').map((e) => e.data ?? e);
    expect(tools.map((e) => [e.phase, e.name, e.stepId])).toEqual([
      ['call', 'probe_echo', 'a'],
      ['result', 'probe_echo', 'a'],
    ]);
    expect(tools[0].arguments).toEqual({ value: 'hi' });
    expect(tools[1].result).toMatchObject({ value: 'hi' });
  });

  it('upgrades without restart, keeps the data dir, refuses the same version', async () => {
    const dataDir = join(t.home, 'plugin-data', PROBE);
    writeFileSync(join(dataDir, 'state.txt'), 'kept');
    // A tool held from a snapshot taken before the upgrade (as a running run holds it), called once.
    const held = (await t.host.ctx.catalog.snapshot('default')).get('probe_echo');
    const ctx = { signal: new AbortController().signal, owner: 'default', permissionMode: 'full-access' as const, grants: [] };
    expect(await held?.invoke({}, ctx)).toMatchObject({ version: '1.0.0' });
    const up = await uploadPackage(v2);
    expect(up.status, JSON.stringify(up.body)).toBe(200);
    expect(up.body.version).toBe('1.1.0');
    expect(readFileSync(join(dataDir, 'state.txt'), 'utf8')).toBe('kept');
    expect(existsSync(join(t.home, 'plugins', PROBE, '1.0.0'))).toBe(false);
    // its next call goes to the version installed now, whether the list was read since or not
    expect(await held?.invoke({}, ctx)).toMatchObject({ version: '1.1.0' });
    expect(await held?.invoke({}, ctx)).toMatchObject({ version: '1.1.0' });
    const run = await runWorkflow([{ id: 'a', tool: 'probe_echo', arguments: { value: 'again' } }]);
    expect(JSON.stringify(run)).toContain('"version":"1.1.0"');
    const same = await uploadPackage(v2);
    expect(same.status).toBe(409);
    expect(same.body.error.code).toBe('plugin_version_not_higher');
  });

  it('disables and enables between runs without restart', async () => {
    const held = (await t.host.ctx.catalog.snapshot('default')).get('probe_echo');
    expect((await t.api('POST', `/api/plugins/${PROBE}/disable`)).body.enabled).toBe(false);
    // A snapshot taken before the disable makes no new calls either.
    const call = held?.invoke({}, { signal: new AbortController().signal, owner: 'default', permissionMode: 'full-access', grants: [] });
    await expect(call).rejects.toMatchObject({ code: 'plugin_disabled' });
    // Still in the authoring catalog, marked unavailable: drafts that use them keep opening and saving.
    const listed = ((await t.api('GET', '/api/agent/tools')).body as any[]).filter((x) => x.origin === PROBE);
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.every((x) => x.available === false)).toBe(true);
    // the plugin list was read again since the disable (the call is answered from it without a wait): still refused
    const again = held?.invoke({}, { signal: new AbortController().signal, owner: 'default', permissionMode: 'full-access', grants: [] });
    await expect(again).rejects.toMatchObject({ code: 'plugin_disabled' });
    const refused = await t.api('POST', '/api/agent/run', { workflow: { steps: [{ id: 'a', tool: 'probe_echo', arguments: {} }] }, config: { planApproval: false } });
    expect(refused.status).toBe(400);
    expect((await t.api('POST', `/api/plugins/${PROBE}/enable`)).body.enabled).toBe(true);
    const run = await runWorkflow([{ id: 'a', tool: 'probe_echo', arguments: { value: 1 } }]);
    expect(run.status).toBe('completed');
  });

  it('keeps drafts that use a disabled plugin savable, while publish and run refuse with the reason', async () => {
    const plan = { steps: [{ id: 'a', tool: 'probe_echo', arguments: { value: 1 } }] };
    const created = await t.api('POST', '/api/workflows', { name: 'Uses probe', description: '', inputSchema: { type: 'object', properties: {} }, plan });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect((await t.api('POST', `/api/plugins/${PROBE}/disable`)).body.enabled).toBe(false);
    try {
      const saved = await t.api('PUT', `/api/workflows/${created.body.id}`, { name: 'Uses probe (edited)', description: '', inputSchema: { type: 'object', properties: {} }, plan, revision: created.body.revision });
      expect(saved.status, JSON.stringify(saved.body)).toBe(200);
      const published = await t.api('POST', `/api/workflows/${created.body.id}/publish`, { revision: saved.body.revision });
      expect(published.status).toBe(400);
      expect(JSON.stringify(published.body.error.details)).toContain('step_unavailable_tool');
      const run = await t.api('POST', `/api/workflows/${created.body.id}/run`, { inputs: {} });
      expect(run.status).toBe(400);
      expect(JSON.stringify(run.body.error)).toContain('currently unavailable');
    } finally {
      expect((await t.api('POST', `/api/plugins/${PROBE}/enable`)).body.enabled).toBe(true);
    }
  });

  it('lets only the default owner change plugins; other owners still see and use them', async () => {
    const other = (await t.api('POST', '/api/owners', { name: 'guest' })).body as { token: string };
    const headers = { 'x-fengyu-token': other.token };
    const denied = await t.api('POST', `/api/plugins/${PROBE}/disable`, undefined, headers);
    expect(denied.status).toBe(403);
    expect((await t.api('DELETE', `/api/plugins/${PROBE}`, undefined, headers)).status).toBe(403);
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(readFileSync(v2))]), 'p.fyp');
    expect((await fetch(`${t.host.url}/api/plugins`, { method: 'POST', headers, body: form })).status).toBe(403);
    expect(((await t.api('GET', '/api/plugins', undefined, headers)).body as any[]).map((p) => p.id)).toEqual([PROBE]);
  });

  it('fails steps of crashing, hanging and garbage-writing workers and keeps serving', async () => {
    // Separate runs: steps of one run share the warm worker, and a crash fails every call in flight.
    const crash = await runWorkflow([{ id: 'crash', tool: 'probe_crash', arguments: {} }]);
    expect(stepResult(crash, 'crash')).toMatchObject({ status: 'failed', error: expect.stringContaining('exited with code 3') });
    const hang = await runWorkflow([{ id: 'hang', tool: 'probe_hang', arguments: {} }]);
    expect(stepResult(hang, 'hang')).toMatchObject({ status: 'failed', error: expect.stringContaining('timed out after 1 s') });
    const garbage = await runWorkflow([{ id: 'garbage', tool: 'probe_garbage', arguments: {} }]);
    expect(stepResult(garbage, 'garbage')).toMatchObject({ status: 'done', result: { ok: true } });
    expect((await t.api('GET', '/api/health')).status).toBe(200);
    expect((await runWorkflow([{ id: 'a', tool: 'probe_echo', arguments: { value: 'after' } }])).status).toBe('completed');
  });

  it('fails a step with {success:false} as tool_failed carrying the worker text', async () => {
    const run = await runWorkflow([{ id: 'a', tool: 'probe_fail', arguments: {} }]);
    expect(run.status).toBe('failed');
    expect(JSON.stringify(run)).toContain('the probe refused');
  });

  it('uploads files and grants them: @file:, FileRef objects, shared directories; refuses escapes', async () => {
    const ref = await upload('/api/files', Buffer.from('hello from an upload\n'), 'note.txt');
    expect(ref.status).toBe(201);
    expect(ref.body).toMatchObject({ name: 'note.txt', size: 21 });
    expect(ref.body.sha256).toMatch(/^[0-9a-f]{64}$/);
    const files = [{ name: 'doc', refs: [ref.body.id] }, { name: 'out', createSharedDirectory: true }];
    const run = await runWorkflow(
      [
        { id: 'byName', tool: 'probe_read', arguments: { path: '@file:doc' } },
        { id: 'byRef', tool: 'probe_echo', arguments: { value: { fileRef: ref.body }, bare: ref.body } },
        { id: 'write', tool: 'probe_write', arguments: { directory: '@file:out', name: 'x.txt', text: 'shared' } },
        { id: 'readBack', tool: 'probe_read', dependsOn: ['write'], arguments: { path: '{{node.write.result.path}}' } },
      ],
      files,
    );
    expect(run.status, JSON.stringify(run)).toBe('completed');
    const text = JSON.stringify(run);
    expect(text).toContain('hello from an upload');
    const echoed = stepResult(run, 'byRef').result;
    expect(echoed.value).toContain(`files/${ref.body.id}/note.txt`);
    expect(echoed.bare).toBe(echoed.value);
    expect(text).toContain('"text":"shared"');

    const escapes = await runWorkflow(
      [
        { id: 'abs', tool: 'probe_read', arguments: { path: '/etc/passwd' } },
        { id: 'dots', tool: 'probe_read', arguments: { path: `${t.home}/runs/../token` } },
        { id: 'readOnlyDir', tool: 'probe_write', arguments: { directory: '@file:doc', name: 'x', text: 'no' } },
      ],
      files,
    );
    expect(escapes.status).toBe('failed');
    for (const id of ['abs', 'dots', 'readOnlyDir']) expect(stepResult(escapes, id)).toMatchObject({ status: 'failed', error: expect.stringContaining('outside every file grant') });
    expect(JSON.stringify(escapes)).not.toContain('root:x:0');
  });

  it('refuses bad manifests with every problem named, zip-slip, symlinks and zip bombs', async () => {
    const bad = await zipEntries([{ name: 'manifest.json', data: JSON.stringify({ ...MINIMAL_MANIFEST, id: 'BAD', aiTools: [{ name: 'tiny_noop', description: 'x', method: 'missing' }] }) }, { name: 'worker.js', data: '' }]);
    const r1 = await upload('/api/plugins', bad);
    expect(r1.status).toBe(400);
    expect(r1.body.error.code).toBe('invalid_manifest');
    expect(r1.body.error.details.map((d: any) => d.code).sort()).toEqual(['manifest_bad_id', 'manifest_tool_effect_missing', 'manifest_tool_method_missing']);
    expect(r1.body.error.details[0].message).toBeTypeOf('string');

    const manifest = JSON.stringify(MINIMAL_MANIFEST);
    const slip = await zipEntries([{ name: 'manifest.json', data: manifest }, { name: 'worker.js', data: '' }, { name: 'aa/evil.js', data: 'x' }], { 'aa/evil.js': '../evil.js' });
    const r2 = await upload('/api/plugins', slip);
    expect(r2.status).toBe(400);
    expect(r2.body.error.code).toBe('invalid_package');
    expect(existsSync(join(t.home, 'plugins', 'evil.js'))).toBe(false);

    const abs = await zipEntries([{ name: 'manifest.json', data: manifest }, { name: 'worker.js', data: '' }, { name: 'xtmp/evil.js', data: 'x' }], { 'xtmp/evil.js': '/tmp/evil.js' });
    expect((await upload('/api/plugins', abs)).body.error.code).toBe('invalid_package');

    const link = await zipEntries([{ name: 'manifest.json', data: manifest }, { name: 'worker.js', data: '/etc/passwd', mode: 0o120777 }]);
    const r3 = await upload('/api/plugins', link);
    expect(r3.body.error.code).toBe('invalid_package');
    expect(r3.body.error.message).toContain('symbolic link');

    const bomb = await zipEntries([{ name: 'manifest.json', data: manifest }, { name: 'worker.js', data: Buffer.alloc(8 * 1024 * 1024) }]);
    const r4 = await upload('/api/plugins', bomb);
    expect(r4.status).toBe(413);
    expect(r4.body.error.code).toBe('package_too_large');

    expect((await upload('/api/plugins', Buffer.from('not a zip'))).body.error.code).toBe('invalid_package');
    expect(((await t.api('GET', '/api/plugins')).body as any[]).map((p) => p.id)).toEqual([PROBE]);
  });

  it('uninstalls: gone from the list and the catalog, install dir removed, data kept', async () => {
    expect((await t.api('DELETE', `/api/plugins/${PROBE}`)).status).toBe(200);
    expect((await t.api('GET', '/api/plugins')).body).toEqual([]);
    expect(((await t.api('GET', '/api/agent/tools')).body as any[]).some((x) => x.origin === PROBE)).toBe(false);
    expect(existsSync(join(t.home, 'plugins', PROBE))).toBe(false);
    expect(existsSync(join(t.home, 'plugin-data', PROBE, 'state.txt'))).toBe(true);
    expect((await t.api('DELETE', `/api/plugins/${PROBE}`)).status).toBe(404);
  });
});
