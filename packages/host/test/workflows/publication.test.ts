import { stableHash } from '@fengyu/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_OWNER } from '../../src/http/auth';
import type { Tool } from '../../src/tools/tool';
import { auto, startTestHost, type TestHost } from '../support/host';
import { toolSourceContract } from '../mcp/tool-source-contract';

/** Publication: frozen versions, the model's run_workflow_<id> tool, restore, revisions. */

const offline: Tool = {
  name: 'offline_tool',
  description: 'an installed tool that is currently unavailable',
  inputSchema: { type: 'object' },
  effect: 'read',
  source: 'plugin',
  id: 'test.plugin:offline_tool',
  schemaRevision: stableHash({}),
  idempotent: false,
  available: false,
  invoke: async () => ({ never: true }),
};

/** A plugin tool the test turns off and on (a plugin disabled and enabled again). */
let switchOn = true;
const switchable = (): Tool => ({ ...offline, name: 'switch_tool', id: 'test.plugin:switch_tool', available: switchOn, invoke: async () => ({ switched: true }) });

let t: TestHost;
beforeAll(async () => {
  t = await startTestHost({ beforeDomains: (ctx) => ctx.catalog.register({ kind: 'plugin', list: async () => [offline, switchable()] }) });
});
afterAll(async () => {
  await t?.close();
});

const schema = { type: 'object', required: ['text'], properties: { text: { type: 'string' } } };
const planWith = (prefix: string) => ({ steps: [{ id: 'say', tool: 'echo', arguments: { value: `${prefix}{{inputs.text}}` } }] });

async function createPublished(prefix = 'V1 ') {
  const def = (await t.api('POST', '/api/workflows', { name: 'Say', description: 'Says the text', inputSchema: schema, plan: planWith(prefix) })).body;
  const pub = await t.api('POST', `/api/workflows/${def.id}/publish`, { revision: def.revision });
  expect(pub.status, JSON.stringify(pub.body)).toBe(200);
  return pub.body;
}

async function workflowTool(id: string): Promise<Tool | undefined> {
  return (await t.host.ctx.catalog.snapshot(DEFAULT_OWNER)).get(`run_workflow_${id}`);
}

async function runTool(id: string, text: string) {
  const res = await t.api('POST', '/api/agent/run', { workflow: { steps: [{ id: 'call', tool: `run_workflow_${id}`, arguments: { text } }] }, config: auto });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const events = await t.stream(res.body.runId);
  return { runId: res.body.runId as string, events, end: events[events.length - 1] };
}

describe('publication', () => {
  it('publishes a frozen version that the model tool keeps running while the draft changes', async () => {
    const pub = await createPublished();
    expect(pub).toMatchObject({ state: 'published', publishedVersion: 1, revision: 2, hasDraftChanges: false });
    const tools = (await t.api('GET', '/api/agent/tools')).body as Array<Record<string, unknown>>;
    expect(tools.find((x) => x.name === `run_workflow_${pub.id}`)).toMatchObject({ source: 'workflow', effect: 'read', inputSchema: schema, available: true, id: `workflow:${pub.id}` });

    const edited = await t.api('PUT', `/api/workflows/${pub.id}`, { revision: 2, plan: planWith('DRAFT ') });
    expect(edited.body).toMatchObject({ state: 'published', publishedVersion: 1, hasDraftChanges: true, revision: 3 });

    // a bare supplied run may call the workflow tool as a step: it runs the published version
    const { events, end } = await runTool(pub.id, 'hi');
    expect(end?.type).toBe('complete');
    expect(end?.data.result).toMatchObject({ echoed: 'V1 hi' });
    const audit = events.find((e) => e.type === 'audit' && e.data.kind === 'workflow_run');
    expect(audit?.data).toMatchObject({ workflowId: pub.id, version: 1 });
    const inner = (await t.api('GET', `/api/agent/runs/${audit?.data.workflowRunId}`)).body;
    expect(inner).toMatchObject({ status: 'completed', origin: 'workflow-tool', workflowId: pub.id, workflowVersion: 1 });

    // the catalog tool's invoke directly, too
    const tool = await workflowTool(pub.id);
    const result = await tool?.invoke({ text: 'direct' }, { signal: new AbortController().signal, owner: DEFAULT_OWNER, permissionMode: 'full-access', grants: [] });
    expect(result).toMatchObject({ echoed: 'V1 direct' });

    // a manual run runs the current draft; version "published" runs the frozen one
    const manual = await t.api('POST', `/api/workflows/${pub.id}/run`, { inputs: { text: 'm' }, config: auto });
    const mEvents = await t.stream(manual.body.runId);
    expect(mEvents.at(-1)?.data.result).toMatchObject({ echoed: 'DRAFT m' });
    const mRun = (await t.api('GET', `/api/agent/runs/${manual.body.runId}`)).body;
    expect(mRun).toMatchObject({ origin: 'workflow', workflowId: pub.id, workflowVersion: null });
    const frozen = await t.api('POST', `/api/workflows/${pub.id}/run`, { inputs: { text: 'f' }, config: auto, version: 'published' });
    expect((await t.stream(frozen.body.runId)).at(-1)?.data.result).toMatchObject({ echoed: 'V1 f' });
    expect((await t.api('GET', `/api/agent/runs/${frozen.body.runId}`)).body.workflowVersion).toBe(1);
  });

  it('lists versions, restores an old one into a draft without changing the active version', async () => {
    const pub = await createPublished('ONE ');
    await t.api('PUT', `/api/workflows/${pub.id}`, { revision: 2, plan: planWith('TWO ') });
    const two = await t.api('POST', `/api/workflows/${pub.id}/publish`, { revision: 3 });
    expect(two.body).toMatchObject({ publishedVersion: 2, revision: 4, hasDraftChanges: false });
    const versions = (await t.api('GET', `/api/workflows/${pub.id}/versions`)).body.versions;
    expect(versions.map((v: { version: number; active: boolean }) => [v.version, v.active])).toEqual([[2, true], [1, false]]);
    const v1 = await t.api('GET', `/api/workflows/${pub.id}/versions/1`);
    expect(v1.body.plan).toEqual(planWith('ONE '));

    const stale = await t.api('POST', `/api/workflows/${pub.id}/restore`, { version: 1, revision: 3 });
    expect(stale.status).toBe(409);
    expect(stale.body.error.details).toEqual({ currentRevision: 4 });
    expect((await t.api('POST', `/api/workflows/${pub.id}/restore`, { version: 9, revision: 4 })).status).toBe(404);

    const restored = await t.api('POST', `/api/workflows/${pub.id}/restore`, { version: 1, revision: 4 });
    expect(restored.body).toMatchObject({ publishedVersion: 2, revision: 5, hasDraftChanges: true, plan: planWith('ONE ') });
    expect((await runTool(pub.id, 'x')).end?.data.result).toMatchObject({ echoed: 'TWO x' });

    const three = await t.api('POST', `/api/workflows/${pub.id}/publish`, { revision: 5 });
    expect(three.body).toMatchObject({ publishedVersion: 3, hasDraftChanges: false });
    expect((await runTool(pub.id, 'y')).end?.data.result).toMatchObject({ echoed: 'ONE y' });
    // publishing an unchanged draft makes no new version
    const again = await t.api('POST', `/api/workflows/${pub.id}/publish`, { revision: 6 });
    expect(again.body).toMatchObject({ publishedVersion: 3, revision: 6 });
  });

  it('refuses a stale publish and keeps unavailable tools out of published and run versions', async () => {
    const def = (await t.api('POST', '/api/workflows', { name: 'Off', plan: { steps: [{ id: 'a', tool: 'offline_tool' }] } })).body;
    expect(def.state).toBe('draft');
    const stale = await t.api('POST', `/api/workflows/${def.id}/publish`, { revision: 7 });
    expect(stale.status).toBe(409);
    const pub = await t.api('POST', `/api/workflows/${def.id}/publish`, { revision: 1 });
    expect(pub.status).toBe(400);
    expect(pub.body.error.details.map((d: { code: string }) => d.code)).toEqual(['step_unavailable_tool']);
    const run = await t.api('POST', `/api/workflows/${def.id}/run`, { inputs: {} });
    expect(run.status).toBe(400);
    expect((await t.api('GET', `/api/workflows/${def.id}`)).body).toMatchObject({ revision: 1, state: 'draft' });
  });

  it('inside the tool call, an inner gate asks the person behind the call (chat card), and a refusal fails it', async () => {
    const def = (await t.api('POST', '/api/workflows', { name: 'Note', inputSchema: schema, plan: { steps: [{ id: 'note', tool: 'write_note', arguments: { text: '{{inputs.text}}' } }] } })).body;
    await t.api('POST', `/api/workflows/${def.id}/publish`, { revision: 1 });
    const tool = await workflowTool(def.id);
    expect(tool?.effect).toBe('write');
    const before = t.tools.calls.get('write_note') ?? 0;
    const asked: string[] = [];
    const askApproval = async (_reason: string, detail: { tool: string }) => {
      asked.push(detail.tool);
      return false;
    };
    const err = await tool?.invoke({ text: 'x' }, { signal: new AbortController().signal, owner: DEFAULT_OWNER, permissionMode: 'ask', grants: [], askApproval }).then(
      () => undefined,
      (e) => e,
    );
    expect(asked).toEqual(['write_note']);
    expect(err?.code).toBe('workflow_run_failed');
    expect(String(err?.params.reason)).toContain('rejected in the chat');
    expect(t.tools.calls.get('write_note') ?? 0).toBe(before);
    const approved = await tool?.invoke({ text: 'z' }, { signal: new AbortController().signal, owner: DEFAULT_OWNER, permissionMode: 'ask', grants: [], askApproval: async () => true });
    expect(approved).toEqual({ written: 'z' });
    const ok = await tool?.invoke({ text: 'y' }, { signal: new AbortController().signal, owner: DEFAULT_OWNER, permissionMode: 'approve-for-me', grants: [] });
    expect(ok).toEqual({ written: 'y' });
    // bad tool inputs are named before a run starts
    const bad = await tool?.invoke({ text: 5 }, { signal: new AbortController().signal, owner: DEFAULT_OWNER, permissionMode: 'full-access', grants: [] }).then(
      () => undefined,
      (e) => e,
    );
    expect(bad?.code).toBe('tool_failed');
    expect(String(bad?.params.reason)).toContain('text');
  });

  it('never lets a saved definition call a real published workflow tool (no recursion)', async () => {
    const pub = await createPublished();
    expect(await workflowTool(pub.id)).toBeDefined();
    const nested = await t.api('POST', '/api/workflows', { name: 'Outer', inputSchema: schema, plan: { steps: [{ id: 'inner', tool: `run_workflow_${pub.id}`, arguments: { text: '{{inputs.text}}' } }] } });
    expect(nested.status).toBe(400);
    expect(nested.body.error.details.map((d: { code: string }) => d.code)).toContain('workflow_nested_tool');
    // nor by editing an existing definition to call itself
    const self = await t.api('PUT', `/api/workflows/${pub.id}`, { revision: pub.revision, plan: { steps: [{ id: 'me', tool: `run_workflow_${pub.id}`, arguments: { text: 'x' } }] } });
    expect(self.status).toBe(400);
    expect(self.body.error.details.map((d: { code: string }) => d.code)).toContain('workflow_nested_tool');
  });

  it('the catalog a workflow runs against has no workflow tools, while the full catalog does', async () => {
    const pub = await createPublished();
    const workflows = t.host.app.workflows;
    if (!workflows) throw new Error('no workflows domain');
    const base = await workflows.base.snapshot(DEFAULT_OWNER);
    expect(base.tools.filter((x) => x.source === 'workflow')).toEqual([]);
    expect(base.get('echo')).toBeDefined();
    expect(await workflowTool(pub.id)).toBeDefined();
    // listing the workflow tools (which reads the base catalog) never lists them inside it
    const full = await t.host.ctx.catalog.snapshot(DEFAULT_OWNER);
    expect(full.tools.filter((x) => x.source === 'workflow').length).toBeGreaterThan(0);
  });

  it('the workflow tools follow each publish and delete at once, and their availability the live catalog', async () => {
    // the published list is kept between snapshots: read it before every change
    const def = (await t.api('POST', '/api/workflows', { name: 'Switch', inputSchema: schema, plan: { steps: [{ id: 'a', tool: 'switch_tool' }] } })).body;
    expect(await workflowTool(def.id)).toBeUndefined();
    const v1 = (await t.api('POST', `/api/workflows/${def.id}/publish`, { revision: def.revision })).body;
    const first = await workflowTool(def.id);
    expect(first).toMatchObject({ available: true, inputSchema: schema });
    const wider = { ...schema, properties: { ...schema.properties, more: { type: 'number' } } };
    const saved = (await t.api('PUT', `/api/workflows/${def.id}`, { revision: v1.revision, inputSchema: wider })).body;
    expect((await workflowTool(def.id))?.schemaRevision).toBe(first?.schemaRevision);
    await t.api('POST', `/api/workflows/${def.id}/publish`, { revision: saved.revision });
    const second = await workflowTool(def.id);
    expect(second?.inputSchema).toEqual(wider);
    expect(second?.schemaRevision).not.toBe(first?.schemaRevision);

    // hostile: the plugin tool is turned off after the list was read; the workflow tool is not runnable
    switchOn = false;
    try {
      expect(await workflowTool(def.id)).toMatchObject({ available: false });
      const res = await t.api('POST', '/api/agent/run', { workflow: { steps: [{ id: 'call', tool: `run_workflow_${def.id}`, arguments: { text: 'x' } }] }, config: auto });
      expect(res.status).toBe(400);
      const direct = await t.api('POST', `/api/workflows/${def.id}/run`, { version: 'published', inputs: { text: 'x' } });
      expect(direct.status).toBe(400);
    } finally {
      switchOn = true;
    }
    expect(await workflowTool(def.id)).toMatchObject({ available: true });
    await t.api('DELETE', `/api/workflows/${def.id}`);
    expect(await workflowTool(def.id)).toBeUndefined();
  });

  it('removes the tool when the workflow is deleted', async () => {
    const pub = await createPublished();
    expect(await workflowTool(pub.id)).toBeDefined();
    await t.api('DELETE', `/api/workflows/${pub.id}`);
    expect(await workflowTool(pub.id)).toBeUndefined();
    expect((await t.api('GET', `/api/workflows/${pub.id}/versions`)).status).toBe(404);
  });
});

toolSourceContract('workflow tools', {
  owner: DEFAULT_OWNER,
  make: async () => {
    await createPublished();
    const source = { kind: 'workflow' as const, list: async (o: string) => (await t.host.ctx.catalog.snapshot(o)).tools.filter((x) => x.source === 'workflow') };
    return { source };
  },
  sample: () => ({ text: 'contract' }),
});

describe('errorWorkflowId', () => {
  const failedRunSchema = { type: 'object', required: ['failedRun'], properties: { failedRun: { type: 'object' } } };
  const notifier = async (schema: unknown = failedRunSchema, publish = true) => {
    const def = (await t.api('POST', '/api/workflows', { name: 'Notify', description: '', inputSchema: schema, plan: { steps: [{ id: 'say', tool: 'echo', arguments: { value: 'failed' } }] } })).body;
    if (publish) expect((await t.api('POST', `/api/workflows/${def.id}/publish`, { revision: def.revision })).status).toBe(200);
    return def.id as string;
  };

  it('is saved on POST and PUT when it names a published workflow of the owner with an object input failedRun, and cleared with null', async () => {
    const handler = await notifier();
    const created = await t.api('POST', '/api/workflows', { name: 'Main', description: '', inputSchema: schema, plan: planWith('x '), errorWorkflowId: handler });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body.errorWorkflowId).toBe(handler);
    expect((await t.api('GET', `/api/workflows/${created.body.id}`)).body.errorWorkflowId).toBe(handler);
    const cleared = await t.api('PUT', `/api/workflows/${created.body.id}`, { revision: created.body.revision, errorWorkflowId: null });
    expect(cleared.body.errorWorkflowId).toBeNull();
    const set = await t.api('PUT', `/api/workflows/${created.body.id}`, { revision: cleared.body.revision, errorWorkflowId: handler });
    expect(set.body.errorWorkflowId).toBe(handler);
    // a save that leaves it out keeps it
    const kept = await t.api('PUT', `/api/workflows/${created.body.id}`, { revision: set.body.revision, name: 'Main 2' });
    expect(kept.body.errorWorkflowId).toBe(handler);
  });

  it('refuses, with a localized 400 naming it, a workflow without an object failedRun input, an unpublished or unknown one, another owner’s, and itself', async () => {
    const main = (await t.api('POST', '/api/workflows', { name: 'Main', description: '', inputSchema: schema, plan: planWith('x ') })).body;
    const put = (errorWorkflowId: string, headers?: Record<string, string>) => t.api('PUT', `/api/workflows/${main.id}`, { revision: main.revision, errorWorkflowId }, headers);
    const noInput = await notifier(schema);
    const stringInput = await notifier({ type: 'object', properties: { failedRun: { type: 'string' } } });
    const draft = await notifier(failedRunSchema, false);
    const cases: Array<[string, string, string]> = [
      [noInput, 'error_workflow_no_failed_run', `errorWorkflowId ${noInput}: the error workflow needs an object input named failedRun in its input schema.`],
      [stringInput, 'error_workflow_no_failed_run', `errorWorkflowId ${stringInput}: the error workflow needs an object input named failedRun in its input schema.`],
      [draft, 'error_workflow_unpublished', `errorWorkflowId ${draft} names a workflow that has never been published: publish it first.`],
      ['nope', 'error_workflow_unknown', 'errorWorkflowId nope names no workflow of yours.'],
      [main.id, 'error_workflow_self', 'errorWorkflowId cannot name the workflow itself.'],
    ];
    for (const [id, code, message] of cases) {
      const res = await put(id);
      expect(res.status, id).toBe(400);
      expect(res.body.error).toMatchObject({ code, message });
    }
    const zh = await t.api('PUT', `/api/workflows/${main.id}`, { revision: main.revision, errorWorkflowId: draft }, { 'accept-language': 'zh-CN' });
    expect(zh.body.error.message).toBe(`errorWorkflowId ${draft} 指向的工作流从未发布：请先发布它。`);
    // another owner's published error workflow is unknown to this one
    const bob = (await t.api('POST', '/api/owners', { name: 'bob-errors' })).body.token as string;
    const asBob = { 'x-fengyu-token': bob };
    const bobs = (await t.api('POST', '/api/workflows', { name: 'Bob notify', description: '', inputSchema: failedRunSchema, plan: { steps: [{ id: 'say', tool: 'echo', arguments: { value: 'b' } }] } }, asBob)).body;
    expect((await t.api('POST', `/api/workflows/${bobs.id}/publish`, { revision: bobs.revision }, asBob)).status).toBe(200);
    expect((await put(bobs.id)).body.error.code).toBe('error_workflow_unknown');
    // nothing was saved by a refused change
    expect((await t.api('GET', `/api/workflows/${main.id}`)).body).toMatchObject({ revision: main.revision, errorWorkflowId: null });
  });
});
