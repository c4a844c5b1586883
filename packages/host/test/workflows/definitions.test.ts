import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TEMPLATES_DIR, TemplateStore } from '../../src/workflows/templates';
import { startTestHost, type TestHost } from '../support/host';

/** Definitions over HTTP: create, read, graph storage, revisions, validation, copy, delete, templates. */

let t: TestHost;
beforeAll(async () => {
  t = await startTestHost();
});
afterAll(async () => {
  await t?.close();
});

const schema = { type: 'object', required: ['text'], properties: { text: { type: 'string' }, n: { type: 'integer' } } };
const plan = { goal: 'Echo {{inputs.text}}', steps: [{ id: 'first', tool: 'echo', arguments: { value: '{{inputs.text}}' } }, { id: 'second', tool: 'echo', arguments: { value: '{{node.first.result.echoed}}' }, dependsOn: ['first'] }] };
const graph = { version: 1, nodes: [{ id: 'start', type: 'start', position: { x: 1, y: 2 }, data: { fields: [] } }], edges: [], notes: [{ id: 'n1', type: 'note', position: { x: 9, y: 9 }, data: { text: 'hello' } }], custom: { kept: true } };

async function create(body: Record<string, unknown> = {}) {
  const res = await t.api('POST', '/api/workflows', { name: 'Echo', description: 'd', inputSchema: schema, plan, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
}

describe('workflow definitions', () => {
  it('stores the authored graph verbatim and lists the definition', async () => {
    const def = await create({ graph });
    expect(def).toMatchObject({ name: 'Echo', state: 'draft', revision: 1, publishedVersion: null, hasDraftChanges: false, graphReconstructed: false });
    expect(def.graph).toEqual(graph);
    const again = await t.api('GET', `/api/workflows/${def.id}`);
    expect(again.body.graph).toEqual(graph);
    const list = await t.api('GET', '/api/workflows');
    expect(list.body.workflows.map((w: { id: string }) => w.id)).toContain(def.id);
  });

  it('rebuilds a graph from plan + layout when none was saved', async () => {
    const def = await create({ layout: { second: { x: 700, y: 50 } } });
    expect(def.graphReconstructed).toBe(true);
    const nodes = def.graph.nodes as Array<{ id: string; type: string; position: { x: number; y: number }; data: Record<string, unknown> }>;
    expect(nodes.map((n) => `${n.id}:${n.type}`)).toEqual(['start:start', 'first:tool', 'second:tool']);
    expect(nodes[2]?.position).toEqual({ x: 700, y: 50 });
    expect(nodes[0]?.data.fields).toEqual([{ name: 'text', type: 'text', required: true }, { name: 'n', type: 'integer' }]);
    expect(def.graph.edges).toEqual([
      { id: 'e_start_first', source: 'start', target: 'first' },
      { id: 'e_first_second', source: 'first', target: 'second' },
    ]);
  });

  it('lets one of two racing editors win; the other gets 409 and loses nothing', async () => {
    const def = await create();
    const a = { revision: 1, name: 'Editor A', plan, graph: { ...graph, by: 'a' } };
    const b = { revision: 1, name: 'Editor B', plan, graph: { ...graph, by: 'b' } };
    const [ra, rb] = await Promise.all([t.api('PUT', `/api/workflows/${def.id}`, a), t.api('PUT', `/api/workflows/${def.id}`, b)]);
    const statuses = [ra.status, rb.status].sort();
    expect(statuses).toEqual([200, 409]);
    const [win, lose] = ra.status === 200 ? [ra, rb] : [rb, ra];
    expect(lose.body.error.code).toBe('workflow_revision_conflict');
    expect(lose.body.error.details).toEqual({ currentRevision: 2 });
    const now = await t.api('GET', `/api/workflows/${def.id}`);
    expect(now.body.revision).toBe(2);
    expect(now.body.name).toBe(win.body.name);
    expect(now.body.graph.by).toBe(win.body.graph.by);
    // the loser retries on the current revision and nothing of the winner is lost in between
    const retry = await t.api('PUT', `/api/workflows/${def.id}`, { ...(win === ra ? b : a), revision: 2 });
    expect(retry.status).toBe(200);
    expect(retry.body.revision).toBe(3);
  });

  it('keeps fields a PUT leaves out and drops a stale graph when only the plan changes', async () => {
    const def = await create({ graph });
    const renamed = await t.api('PUT', `/api/workflows/${def.id}`, { revision: 1, name: 'Renamed' });
    expect(renamed.body).toMatchObject({ name: 'Renamed', revision: 2, graph });
    const replanned = await t.api('PUT', `/api/workflows/${def.id}`, { revision: 2, plan: { steps: [{ id: 'only', tool: 'noop' }] } });
    expect(replanned.body.graphReconstructed).toBe(true);
    expect(replanned.body.inputSchema).toEqual(schema);
  });

  it('rejects every save-time problem at once, localized', async () => {
    const steps: unknown[] = Array.from({ length: 66 }, (_, i) => ({ id: `s${i}`, tool: 'noop' }));
    steps[0] = { id: 's0', tool: 'echo', arguments: { value: '{{inputs.undeclared}}' } };
    steps[1] = { id: 's1', tool: 'write_note', arguments: { text: 'x' }, retry: { maxAttempts: 3 } };
    steps[2] = { id: 's2', tool: 'run_workflow_abcdef' };
    steps[3] = { id: 's3', tool: 'no_such_tool' };
    const body = { name: 'Bad', inputSchema: schema, plan: { steps } };
    const res = await t.api('POST', '/api/workflows', body);
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('workflow_invalid');
    const codes = (res.body.error.details as Array<{ code: string; message: string }>).map((d) => d.code);
    expect(codes).toEqual(expect.arrayContaining(['ref_undeclared_input', 'plan_too_many_steps', 'retry_unsafe', 'workflow_nested_tool']));
    // a draft may keep a tool not installed here (an import); publishing and running refuse it
    expect(codes).not.toContain('step_unknown_tool');
    const zh = await t.api('POST', '/api/workflows', body, { 'accept-language': 'zh-CN' });
    expect(zh.body.error.message).toContain('工作流无法保存');
    const nested = (zh.body.error.details as Array<{ code: string; message: string }>).find((d) => d.code === 'workflow_nested_tool');
    expect(nested?.message).toContain('工作流不能运行其他工作流');
    // an invalid PUT changes nothing
    const def = await create();
    const bad = await t.api('PUT', `/api/workflows/${def.id}`, { revision: 1, plan: { steps: [{ id: 'x', tool: 'echo', arguments: { v: '{{inputs.ghost}}' } }] } });
    expect(bad.status).toBe(400);
    expect((await t.api('GET', `/api/workflows/${def.id}`)).body).toMatchObject({ revision: 1, plan });
  });

  it('refuses hostile and malformed bodies', async () => {
    const cases: Array<[unknown, number]> = [
      [{ name: 'x', plan: 'not a plan' }, 400],
      [{ name: 'x', plan: { steps: [] } }, 400],
      [{ name: 'x', inputSchema: { type: 'array' }, plan }, 400],
      [{ name: 'x', inputSchema: schema, plan, graph: { blob: 'y'.repeat(600 * 1024) } }, 400],
      [{ name: 'x'.repeat(201), inputSchema: schema, plan }, 400],
      [{ templateId: 'no-such-template' }, 404],
    ];
    for (const [body, status] of cases) {
      const res = await t.api('POST', '/api/workflows', body);
      expect(res.status, JSON.stringify(body).slice(0, 80)).toBe(status);
    }
    const long = await t.api('POST', '/api/workflows', { name: 'x'.repeat(201), plan }, { 'accept-language': 'zh-CN' });
    expect(long.body.error.details[0]).toMatchObject({ code: 'workflow_name_too_long', message: '名称超过 200 个字符。' });
    const stale = await t.api('PUT', '/api/workflows/nope', { revision: 1, name: 'x' });
    expect(stale.status).toBe(404);
    const badId = await t.api('GET', '/api/workflows/..%2F..%2Fetc');
    expect(badId.status).toBe(400);
  });

  it('duplicates and deletes, scoped to the owner', async () => {
    const def = await create({ graph });
    const copy = await t.api('POST', `/api/workflows/${def.id}/duplicate`);
    expect(copy.body).toMatchObject({ name: 'Echo (copy)', state: 'draft', revision: 1, graph });
    expect(copy.body.id).not.toBe(def.id);
    const other = await t.api('POST', '/api/owners', { name: 'bob' });
    const bobToken = other.body.token as string;
    const asBob = await t.api('GET', `/api/workflows/${def.id}`, undefined, { 'x-fengyu-token': bobToken });
    expect(asBob.status).toBe(404);
    expect((await t.api('DELETE', `/api/workflows/${def.id}`, undefined, { 'x-fengyu-token': bobToken })).status).toBe(404);
    const del = await t.api('DELETE', `/api/workflows/${def.id}`);
    expect(del.status).toBe(200);
    expect((await t.api('GET', `/api/workflows/${def.id}`)).status).toBe(404);
    expect((await t.api('GET', `/api/workflows/${copy.body.id}`)).status).toBe(200);
  });

  it('serves the template gallery and creates from a template', async () => {
    const res = await t.api('GET', '/api/workflow-templates');
    const ids = (res.body.templates as Array<{ id: string }>).map((x) => x.id);
    expect(ids).toEqual(expect.arrayContaining(['fetch-summarize', 'compare-pages']));
    const tpl = (res.body.templates as Array<Record<string, any>>).find((x) => x.id === 'fetch-summarize');
    expect(tpl).toMatchObject({ category: 'web', missingTools: [] });
    expect(tpl?.graph.nodes.length).toBe(3);
    const made = await t.api('POST', '/api/workflows', { templateId: 'fetch-summarize' });
    expect(made.status, JSON.stringify(made.body)).toBe(200);
    expect(made.body).toMatchObject({ name: tpl?.name, state: 'draft', inputSchema: tpl?.inputSchema, plan: tpl?.plan });
  });

  it('loads every template file shipped in the templates folder', async () => {
    const files = readdirSync(TEMPLATES_DIR).filter((f) => f.endsWith('.json'));
    const store = new TemplateStore();
    expect(store.loadDir(TEMPLATES_DIR)).toBe(files.length);
    const listed = (await t.api('GET', '/api/workflow-templates')).body.templates as Array<{ id: string; missingTools: string[] }>;
    expect(listed.length).toBe(files.length);
    // a broken file is skipped, not fatal
    const dir = mkdtempSync(join(tmpdir(), 'fengyu-templates-'));
    writeFileSync(join(dir, 'bad.json'), '{"id": "x", "plan": {}}');
    writeFileSync(join(dir, 'worse.json'), 'not json');
    expect(new TemplateStore().loadDir(dir)).toBe(0);
    rmSync(dir, { recursive: true, force: true });
  });

  it('documents every route in the OpenAPI document', async () => {
    const doc = (await t.api('GET', '/api/openapi.json')).body;
    const paths = Object.keys(doc.paths);
    for (const p of ['/api/workflows', '/api/workflows/{id}', '/api/workflows/{id}/publish', '/api/workflows/{id}/versions', '/api/workflows/{id}/restore', '/api/workflows/{id}/duplicate', '/api/workflows/{id}/run', '/api/workflows/{id}/inputs/{field}/options', '/api/workflow-templates']) {
      expect(paths).toContain(p);
    }
  });
});
