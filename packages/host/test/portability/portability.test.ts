import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';

/** Workflows in and out over HTTP: export, import into a second host, name clashes, bad documents, diffs. */

let a: TestHost;
let b: TestHost;
beforeAll(async () => {
  [a, b] = await Promise.all([startTestHost(), startTestHost()]);
});
afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
});

const schema = { type: 'object', required: ['text'], properties: { text: { type: 'string' } } };
const plan = {
  goal: 'Echo {{inputs.text}}',
  steps: [
    { id: 'first', title: 'First', tool: 'echo', arguments: { value: '{{inputs.text}}' } },
    { id: 'second', tool: 'echo', arguments: { value: '{{node.first.result.echoed}}' }, dependsOn: ['first'] },
  ],
};

async function create(t: TestHost, body: Record<string, unknown> = {}) {
  const res = await t.api('POST', '/api/workflows', { name: 'Echo twice', description: 'd', inputSchema: schema, plan, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { id: string; revision: number; name: string };
}

describe('export and import', () => {
  it('exports a self-contained document and imports it on a second host as a draft that runs', async () => {
    const def = await create(a);
    const res = await a.api('GET', `/api/workflows/${def.id}/export`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-disposition')).toContain(`echo-twice.${def.id}.fengyu.json`);
    const doc = res.body;
    expect(doc).toMatchObject({ format: 'fengyu.workflow', formatVersion: 1, name: 'Echo twice', description: 'd', inputSchema: schema, plan, secrets: [], tools: [{ name: 'echo', source: 'builtin' }] });
    for (const k of ['id', 'owner', 'revision', 'publishedVersion', 'state']) expect(doc).not.toHaveProperty(k);
    expect(typeof doc.exportedAt).toBe('string');
    expect(doc.graph.nodes.length).toBeGreaterThan(0);

    const imp = await b.api('POST', '/api/workflows/import', doc);
    expect(imp.status, JSON.stringify(imp.body)).toBe(201);
    expect(imp.body).toMatchObject({ name: 'Echo twice', state: 'draft', warnings: [] });
    const got = await b.api('GET', `/api/workflows/${imp.body.id}`);
    expect(got.body.plan).toEqual(plan);
    expect(got.body.graph).toEqual(doc.graph);
    // the import runs on the second host
    const run = await b.api('POST', `/api/workflows/${imp.body.id}/run`, { inputs: { text: 'hi' } });
    expect(run.status).toBe(200);
    const events = await b.stream(run.body.runId);
    expect(events.at(-1)?.type).toBe('complete');
  });

  it('suffixes a taken name: (2), (3)', async () => {
    const def = await create(a, { name: 'Clash' });
    const doc = (await a.api('GET', `/api/workflows/${def.id}/export`)).body;
    const first = await a.api('POST', '/api/workflows/import', doc);
    const second = await a.api('POST', '/api/workflows/import', doc);
    expect([first.body.name, second.body.name]).toEqual(['Clash (2)', 'Clash (3)']);
  });

  it('imports a workflow whose tool is missing here as a draft with a warning; publishing refuses it', async () => {
    const def = await create(a, { name: 'Needs a plugin' });
    const doc = (await a.api('GET', `/api/workflows/${def.id}/export`)).body;
    doc.plan.steps[1].tool = 'not_installed_here';
    doc.graph = undefined;
    const imp = await b.api('POST', '/api/workflows/import', doc);
    expect(imp.status, JSON.stringify(imp.body)).toBe(201);
    expect(imp.body.warnings).toEqual([{ code: 'import_tool_missing', name: 'not_installed_here' }]);
    const pub = await b.api('POST', `/api/workflows/${imp.body.id}/publish`, { revision: 1 });
    expect(pub.status).toBe(400);
    expect(pub.body.error.details.map((d: { code: string }) => d.code)).toContain('step_unknown_tool');
  });

  it('lists the secrets a workflow uses by name, never a value, and warns on import where one is missing', async () => {
    expect((await a.api('PUT', '/api/secrets/API_KEY', { value: 'sk-very-secret-value' })).status).toBe(204);
    const def = await create(a, { name: 'Uses a secret', plan: { steps: [{ id: 'first', tool: 'echo', arguments: { value: '{{secrets.API_KEY}}' } }] }, inputSchema: { type: 'object', properties: {} } });
    const res = await a.api('GET', `/api/workflows/${def.id}/export`);
    expect(res.body.secrets).toEqual(['API_KEY']);
    expect(JSON.stringify(res.body)).not.toContain('sk-very-secret-value');
    const imp = await b.api('POST', '/api/workflows/import', res.body);
    expect(imp.status, JSON.stringify(imp.body)).toBe(201);
    expect(imp.body.warnings).toEqual([{ code: 'import_secret_missing', name: 'API_KEY' }]);
    // the same document on the host that has the secret: nothing missing
    expect((await a.api('POST', '/api/workflows/import', res.body)).body.warnings).toEqual([]);
  });

  it('refuses invalid documents with every problem listed, in English and Chinese, and creates nothing', async () => {
    const before = (await b.api('GET', '/api/workflows')).body.workflows.length;
    const bad = await b.api('POST', '/api/workflows/import', { format: 'other', formatVersion: 1, name: 3, graph: [] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('import_invalid');
    expect(bad.body.error.details.map((d: { code: string }) => d.code)).toEqual(['import_format_invalid', 'import_field_type', 'import_field_type', 'import_field_missing']);
    const zh = await b.api('POST', '/api/workflows/import', [1, 2], { 'accept-language': 'zh-CN' });
    expect(zh.status).toBe(400);
    expect(zh.body.error.message).toContain('无法导入');
    const future = await b.api('POST', '/api/workflows/import', { format: 'fengyu.workflow', formatVersion: 2, name: 'x', plan: { steps: [] } });
    expect(future.body.error.code).toBe('import_format_unsupported');
    expect(future.body.error.message).toContain('version 2');
    // a document whose plan is wrong: the definition's problems, listed
    const wrong = await b.api('POST', '/api/workflows/import', { format: 'fengyu.workflow', formatVersion: 1, name: 'x', plan: { steps: [{ id: 'a', tool: 'echo', dependsOn: ['ghost'] }] } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.error.code).toBe('import_invalid');
    expect(wrong.body.error.details.map((d: { code: string }) => d.code)).toContain('step_unknown_dependency');
    const huge = await b.api('POST', '/api/workflows/import', { format: 'fengyu.workflow', formatVersion: 1, name: 'x', plan: { steps: [] }, description: 'x'.repeat(2 * 1024 * 1024) });
    expect(huge.status).toBe(413);
    expect((await b.api('GET', '/api/workflows')).body.workflows.length).toBe(before);
  });

  it('keeps another owner out: their workflow does not exist for the caller', async () => {
    const def = await create(a);
    const bob = (await a.api('POST', '/api/owners', { name: 'bob' })).body.token as string;
    const res = await a.api('GET', `/api/workflows/${def.id}/export`, undefined, { 'x-fengyu-token': bob });
    expect(res.status).toBe(404);
    const diff = await a.api('GET', `/api/workflows/${def.id}/diff?from=draft&to=draft`, undefined, { 'x-fengyu-token': bob });
    expect(diff.status).toBe(404);
  });
});

describe('diffs', () => {
  it('lists added, removed and changed steps and inputs between versions and the draft', async () => {
    const def = await create(a, { name: 'Diffed' });
    const published = await a.api('POST', `/api/workflows/${def.id}/publish`, { revision: 1 });
    expect(published.status).toBe(200);
    const next = {
      revision: published.body.revision,
      inputSchema: { type: 'object', properties: { text: { type: 'string' }, extra: { type: 'integer' } } },
      plan: {
        goal: plan.goal,
        steps: [
          { id: 'first', title: 'First, renamed', tool: 'echo', arguments: { value: '{{inputs.text}}' } },
          { id: 'third', tool: 'echo', arguments: { value: 'x' }, dependsOn: ['first'] },
        ],
      },
    };
    const saved = await a.api('PUT', `/api/workflows/${def.id}`, next);
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    const expected = { steps: { added: ['third'], removed: ['second'], changed: [{ id: 'first', fields: ['title'] }] }, inputs: { added: ['extra'], removed: [], changed: ['text'] } };
    // default: the active version against the draft
    expect((await a.api('GET', `/api/workflows/${def.id}/diff`)).body).toEqual(expected);
    expect((await a.api('POST', `/api/workflows/${def.id}/publish`, { revision: saved.body.revision })).status).toBe(200);
    expect((await a.api('GET', `/api/workflows/${def.id}/diff?from=1&to=2`)).body).toEqual(expected);
    const back = await a.api('GET', `/api/workflows/${def.id}/diff?from=2&to=1`);
    expect(back.body.steps).toEqual({ added: ['second'], removed: ['third'], changed: [{ id: 'first', fields: ['title'] }] });
    const none = await a.api('GET', `/api/workflows/${def.id}/diff?from=2&to=draft`);
    expect(none.body).toEqual({ steps: { added: [], removed: [], changed: [] }, inputs: { added: [], removed: [], changed: [] } });
  });

  it('refuses a bad side and an unknown version', async () => {
    const def = await create(a, { name: 'Never published' });
    const noFrom = await a.api('GET', `/api/workflows/${def.id}/diff`);
    expect(noFrom.status).toBe(400);
    expect(noFrom.body.error.code).toBe('workflow_diff_side_invalid');
    const bad = await a.api('GET', `/api/workflows/${def.id}/diff?from=latest`, undefined, { 'accept-language': 'zh-CN' });
    expect(bad.body.error.message).toContain('latest');
    const missing = await a.api('GET', `/api/workflows/${def.id}/diff?from=7&to=draft`);
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('workflow_version_not_found');
  });
});
