import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auto, startTestHost, type TestHost } from '../support/host';

/** Manual workflow runs: input binding before the run, placeholder types end to end, approvals. */

let t: TestHost;
beforeAll(async () => {
  t = await startTestHost();
});
afterAll(async () => {
  await t?.close();
});

const schema = {
  type: 'object',
  required: ['name', 'count', 'flag'],
  properties: {
    name: { type: 'string', minLength: 1 },
    count: { type: 'integer' },
    flag: { type: 'boolean' },
    tags: { type: 'array', items: { type: 'string' } },
    meta: { type: 'object', properties: { k: { type: 'boolean' } } },
    mood: { type: 'string', enum: ['calm', 'busy'], default: 'calm' },
  },
};

async function create(plan: unknown, inputSchema: unknown = schema): Promise<string> {
  const res = await t.api('POST', '/api/workflows', { name: 'Typed', inputSchema, plan });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.id;
}

async function runCount(): Promise<number> {
  return (await t.api('GET', '/api/agent/runs?limit=200')).body.runs.length;
}

describe('workflow runs', () => {
  it('names every missing or wrong input before any run starts', async () => {
    const id = await create({ steps: [{ id: 'a', tool: 'echo', arguments: { value: '{{inputs.name}}' } }] });
    const before = await runCount();
    const res = await t.api('POST', `/api/workflows/${id}/run`, { inputs: { count: 'three', flag: 'yes', tags: [1], mood: 'angry' } });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('workflow_inputs_invalid');
    const got = (res.body.error.details as Array<{ code: string; field: string }>).map((d) => `${d.code}:${d.field}`).sort();
    expect(got).toEqual(['input_invalid:count', 'input_invalid:flag', 'input_invalid:mood', 'input_invalid:tags', 'input_missing:name']);
    for (const f of ['name', 'count', 'flag', 'tags', 'mood']) expect(res.body.error.message).toContain(f);
    const zh = await t.api('POST', `/api/workflows/${id}/run`, { inputs: {} }, { 'accept-language': 'zh-CN' });
    expect(zh.body.error.message).toContain('工作流输入无效');
    expect(zh.body.error.details[0].message).toContain('必填');
    expect(await runCount()).toBe(before);
    expect((await t.api('POST', `/api/workflows/${id}/run`, { inputs: [1, 2] })).status).toBe(400);
    expect((await t.api('POST', '/api/workflows/nope/run', { inputs: {} })).status).toBe(404);
  });

  it('keeps the JSON type of exact placeholders and renders embedded ones as text', async () => {
    const id = await create({
      goal: 'Greet {{inputs.name}} x{{inputs.count}}',
      steps: [
        {
          id: 'typed',
          tool: 'echo',
          arguments: {
            value: {
              count: '{{inputs.count}}',
              flag: '{{inputs.flag}}',
              tags: '{{inputs.tags}}',
              meta: '{{inputs.meta}}',
              k: '{{inputs.meta.k}}',
              first: '{{inputs.tags[0]}}',
              mood: '{{inputs.mood}}',
              text: 'n={{inputs.count}} f={{inputs.flag}} t={{inputs.tags}} m={{inputs.meta}}',
            },
          },
        },
      ],
    });
    const res = await t.api('POST', `/api/workflows/${id}/run`, { inputs: { name: 'Ada', count: 3, flag: false, tags: ['a', 'b'], meta: { k: true } }, config: auto });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const events = await t.stream(res.body.runId);
    expect(events.at(-1)?.type).toBe('complete');
    expect(events.at(-1)?.data.result.echoed).toStrictEqual({
      count: 3,
      flag: false,
      tags: ['a', 'b'],
      meta: { k: true },
      k: true,
      first: 'a',
      mood: 'calm',
      text: 'n=3 f=false t=["a","b"] m={"k":true}',
    });
    const run = (await t.api('GET', `/api/agent/runs/${res.body.runId}`)).body;
    expect(run).toMatchObject({ goal: 'Greet Ada x3', workflowId: id, origin: 'workflow' });
    expect(run.inputs).toMatchObject({ mood: 'calm' });
  });

  it('records which definition and version each run ran', async () => {
    const one = { type: 'object', properties: { name: { type: 'string' } } };
    const id = await create({ steps: [{ id: 'a', tool: 'echo', arguments: { value: 'v1 {{inputs.name}}' } }] }, one);
    const pub = await t.api('POST', `/api/workflows/${id}/publish`, { revision: 1 });
    expect(pub.status, JSON.stringify(pub.body)).toBe(200);
    const edit = await t.api('PUT', `/api/workflows/${id}`, { revision: pub.body.revision, plan: { steps: [{ id: 'a', tool: 'echo', arguments: { value: 'draft {{inputs.name}}' } }] } });
    expect(edit.status, JSON.stringify(edit.body)).toBe(200);
    const started = async (body: Record<string, unknown>) => {
      const res = await t.api('POST', `/api/workflows/${id}/run`, { inputs: { name: 'x' }, config: auto, ...body });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const events = await t.stream(res.body.runId);
      return { end: events.at(-1), run: (await t.api('GET', `/api/agent/runs/${res.body.runId}`)).body };
    };
    const published = await started({ version: 'published' });
    expect(published.end?.data.result.echoed).toBe('v1 x');
    expect(published.run).toMatchObject({ workflowId: id, workflowVersion: 1 });
    const draft = await started({});
    expect(draft.end?.data.result.echoed).toBe('draft x');
    expect(draft.run.workflowId).toBe(id);
    expect(draft.run.workflowVersion ?? null).toBeNull();
  });

  it('keeps the normal per-step approval policy for manual runs', async () => {
    const id = await create({ steps: [{ id: 'note', tool: 'write_note', arguments: { text: '{{inputs.name}}' } }] }, { type: 'object', properties: { name: { type: 'string' } } });
    const res = await t.api('POST', `/api/workflows/${id}/run`, { inputs: { name: 'gate' }, config: { permissionMode: 'ask' } });
    const gate = await t.waitFor(res.body.runId, 'step_approval_requested');
    expect(gate.data.stepId).toBe('note');
    expect((await t.api('POST', `/api/agent/${res.body.runId}/approve`)).status).toBe(200);
    const events = await t.stream(res.body.runId);
    expect(events.at(-1)?.data.result).toEqual({ written: 'gate' });
    // plan review is available on request
    const reviewed = await t.api('POST', `/api/workflows/${id}/run`, { inputs: { name: 'r' }, config: { planApproval: true, permissionMode: 'full-access' } });
    expect((await t.waitFor(reviewed.body.runId, 'plan_approval_requested')).data.plan.steps[0].id).toBe('note');
    await t.api('POST', `/api/agent/${reviewed.body.runId}/cancel`);
  });

  it('refuses file inputs it cannot bind and bad config', async () => {
    const id = await create({ steps: [{ id: 'a', tool: 'echo', arguments: { value: '@file:sheet' } }] }, { type: 'object', required: ['sheet'], properties: { sheet: { type: 'string', format: 'fengyu-file' } } });
    const missing = await t.api('POST', `/api/workflows/${id}/run`, { inputs: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.error.details).toEqual([expect.objectContaining({ code: 'input_missing', field: 'sheet' })]);
    const badConfig = await t.api('POST', `/api/workflows/${id}/run`, { inputs: {}, files: [{ name: 'sheet', refs: [] }], config: { permissionMode: 'yolo' } });
    expect(badConfig.status).toBe(400);
    expect(badConfig.body.error.message).toContain('permissionMode');
  });

  it('never evaluates input values as references and refuses hostile inputs', async () => {
    const id = await create({ steps: [{ id: 'a', tool: 'echo', arguments: { value: { raw: '{{inputs.name}}', text: 'say {{inputs.name}}' } } }] }, { type: 'object', properties: { name: { type: 'string', maxLength: 10000 } } });
    const sneaky = '{{inputs.name}} {{node.a.result}} @file:secret';
    const res = await t.api('POST', `/api/workflows/${id}/run`, { inputs: { name: sneaky }, config: auto });
    const events = await t.stream(res.body.runId);
    expect(events.at(-1)?.data.result.echoed).toEqual({ raw: sneaky, text: `say ${sneaky}` });
    const cases: Array<[unknown, string]> = [
      [{ inputs: { name: 'x'.repeat(10001) } }, 'workflow_inputs_invalid'],
      [{ inputs: { name: 42 } }, 'workflow_inputs_invalid'],
      [{ inputs: {}, version: 'nonsense' }, 'invalid_request'],
      [{ inputs: {}, version: 99 }, 'workflow_version_not_found'],
      [{ inputs: {}, version: 'published' }, 'workflow_not_published'],
      [{ inputs: {}, files: 'not-an-array' }, 'invalid_request'],
    ];
    for (const [body, code] of cases) {
      const r = await t.api('POST', `/api/workflows/${id}/run`, body);
      expect(r.body.error?.code, JSON.stringify(body).slice(0, 60)).toBe(code);
    }
    // A `__proto__` key is refused at the front door for every JSON body; other prototype names as inputs by the validator.
    const raw = '{"name":"p","inputSchema":{"type":"object","properties":{"__proto__":{"type":"string"},"constructor":{"type":"string"}}},"plan":{"steps":[{"id":"a","tool":"noop"}]}}';
    const proto = await t.api('POST', '/api/workflows', raw);
    expect(proto.status).toBe(400);
    expect(proto.body.error.code).toBe('forbidden_key');
    const ctor = await t.api('POST', '/api/workflows', raw.replace('"__proto__":{"type":"string"},', '"prototype":{"type":"string"},'));
    expect(ctor.status).toBe(400);
    expect(ctor.body.error.details.map((d: { code: string }) => d.code)).toEqual(['input_name_invalid', 'input_name_invalid']);
  });
});
