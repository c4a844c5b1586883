import { statSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_OWNER } from '../../src/http/auth';
import { filesHolding } from '../support/home-bytes';
import { scriptedHost } from '../support/scripted-host';

const { t, llm } = scriptedHost();
beforeEach(() => {
  expect(llm.pending()).toBe(0);
});

const backend = () => ({ id: 'local', provider: 'openai-compatible', baseURL: llm.url, model: 'scripted', apiKey: 'sk-test-secret-123' });

const plan = (steps: unknown[]) => `\`\`\`json\n${JSON.stringify({ steps })}\n\`\`\``;

describe('no backend configured', () => {
  it('answers a goal-only run with 400 no_chat_backend that says how to configure one', async () => {
    const res = await t.api('POST', '/api/agent/run', { goal: 'say hello' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('no_chat_backend');
    expect(res.body.error.message).toContain('Settings → Chat backends');
    const zh = await t.api('POST', '/api/agent/run', { goal: 'say hello' }, { 'accept-language': 'zh-CN' });
    expect(zh.body.error.message).toContain('未配置聊天后端');
  });

  it('still runs a supplied workflow', async () => {
    const res = await t.api('POST', '/api/agent/run', { config: { planApproval: false }, workflow: { steps: [{ id: 'a', tool: 'echo', arguments: { value: 1 } }] } });
    expect(res.status).toBe(200);
    const events = await t.stream(res.body.runId);
    expect(events.at(-1)?.type).toBe('complete');
  });
});

describe('backend settings', () => {
  it('stores the API key sealed in the vault (its key file 0600) and never returns it', async () => {
    const res = await t.api('PATCH', '/api/settings', { backends: [backend()], defaultBackend: 'local' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const got = await t.api('GET', '/api/settings');
    expect(got.body.backends[0].apiKey).toBe('[redacted]');
    expect(JSON.stringify(got.body)).not.toContain('sk-test-secret-123');
    expect(JSON.stringify(res.body)).not.toContain('sk-test-secret-123');
    expect(statSync(join(t.home, 'secrets.key')).mode & 0o777).toBe(0o600);
    expect(t.host.ctx.vault.getInternal(DEFAULT_OWNER, 'backend:local')).toBe('sk-test-secret-123');
    expect(filesHolding(t.home, 'sk-test-secret-123')).toEqual([]);
  });

  it('keeps the key when the redacted document is sent back, and rejects bad backends', async () => {
    const got = await t.api('GET', '/api/settings');
    const again = await t.api('PATCH', '/api/settings', { backends: got.body.backends });
    expect(again.status).toBe(200);
    expect(t.host.ctx.vault.getInternal(DEFAULT_OWNER, 'backend:local')).toBe('sk-test-secret-123');
    const bad = [
      [{ id: 'x', provider: 'nope', model: 'm' }],
      [{ id: 'x', provider: 'openai-compatible', model: 'm' }],
      [{ id: 'x', provider: 'openai', model: 'm', baseURL: 'file:///etc/passwd' }],
      [{ id: 'x', provider: 'openai', model: 'm', apiKey: 'a', apiKeyEnv: 'B' }],
      [{ id: 'x', provider: 'openai', model: 'm', apiKeyEnv: 'not a name' }],
      [{ id: 'x', provider: 'openai', model: 'm' }, { id: 'x', provider: 'openai', model: 'n' }],
      [{ id: '../x', provider: 'openai', model: 'm' }],
    ];
    for (const backends of bad) {
      const res = await t.api('PATCH', '/api/settings', { backends });
      expect(res.status, JSON.stringify(backends)).toBe(400);
      expect(res.body.error.code).toBe('invalid_settings');
    }
  });
});

describe('model planning over the real provider path', () => {
  it('streams plan tokens without tools, validates, gates, executes and summarizes', async () => {
    const text = plan([
      { id: 'greet', title: 'Echo a greeting', tool: 'echo', arguments: { text: 'hello' } },
      { id: 'again', tool: 'echo', arguments: { value: '{{node.greet.result.echoed}}' }, dependsOn: ['greet'] },
    ]);
    llm.push({ text }, { text: 'Echoed hello twice.' });
    const start = llm.requests.length;
    const res = await t.api('POST', '/api/agent/run', { goal: 'echo hello twice', config: { permissionMode: 'full-access' } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const runId = res.body.runId as string;
    const gate = await t.waitFor(runId, 'plan_approval_requested');
    expect(gate.data.plan.steps.map((s: { id: string }) => s.id)).toEqual(['greet', 'again']);
    const ok = await t.api('POST', `/api/agent/${runId}/approve`);
    expect(ok.status).toBe(200);
    const events = await t.stream(runId);
    const tokens = events.filter((e) => e.type === 'plan_token');
    expect(tokens.length).toBeGreaterThan(3);
    expect(tokens.map((e) => e.data.text).join('')).toBe(text);
    expect(events.findIndex((e) => e.type === 'plan_ready')).toBeGreaterThan(events.findIndex((e) => e.type === 'plan_token'));
    const last = events.at(-1);
    expect(last?.type).toBe('complete');
    expect(last?.data.summary).toBe('Echoed hello twice.');
    expect(last?.data.result.echoed).toBe('hello');

    const planning = llm.requests[start];
    expect(planning?.tools).toBeUndefined();
    const system = JSON.stringify(planning?.messages[0]);
    expect(system).toContain('echo');
    expect(system).toContain('AgentPlan');
    expect(JSON.stringify(planning?.messages)).toContain('echo hello twice');
    expect(llm.headers[start]?.authorization).toBe('Bearer sk-test-secret-123');
  });

  it('repairs an invalid draft once with the validator problems', async () => {
    llm.push({ text: plan([{ id: 'a', tool: 'no_such_tool' }]) }, { text: plan([{ id: 'a', tool: 'noop' }]) }, { text: 'done' });
    const start = llm.requests.length;
    const res = await t.api('POST', '/api/agent/run', { goal: 'do a thing', config: { planApproval: false } });
    expect(res.status).toBe(200);
    const events = await t.stream(res.body.runId);
    expect(events.at(-1)?.type).toBe('complete');
    const ready = events.find((e) => e.type === 'plan_ready');
    expect(ready?.data.plan.steps[0].tool).toBe('noop');
    const repair = JSON.stringify(llm.requests[start + 1]?.messages);
    expect(repair).toContain('no_such_tool');
    expect(repair).toContain('invalid');
  });

  it('explains unparseable answers in the repair round, and fails with a clear error after one repair', async () => {
    llm.push({ text: 'Sure! I would first analyze the file.' }, { text: '{"steps": [{"id": "1bad"}]}' });
    const start = llm.requests.length;
    const res = await t.api('POST', '/api/agent/run', { goal: 'unparseable', config: { planApproval: false } });
    const events = await t.stream(res.body.runId);
    const last = events.at(-1);
    expect(last?.type).toBe('error');
    expect(last?.data.message).toMatch(/invalid|problem/i);
    expect(JSON.stringify(llm.requests[start + 1]?.messages)).toContain('not a JSON object');
    expect(llm.requests.length).toBe(start + 2);
  });

  it('drafts a condition and a forEach: the plan is accepted, the untaken branch skipped, the loop run per item', async () => {
    const text = plan([
      { id: 'count', tool: 'echo', arguments: { value: { rows: 1500, parts: ['north', 'south'] } } },
      { id: 'check', kind: 'condition', dependsOn: ['count'], cases: [{ name: 'big', when: { all: [{ left: '{{node.count.result.echoed.rows}}', op: 'gt', right: 1000 }] } }] },
      { id: 'manager', tool: 'echo', arguments: { text: 'manager' }, dependsOn: ['check:big'] },
      { id: 'team', tool: 'echo', arguments: { text: 'team' }, dependsOn: ['check:else'] },
      { id: 'each', kind: 'forEach', items: '{{node.count.result.echoed.parts}}', dependsOn: ['count'], steps: [{ id: 'part', tool: 'echo', arguments: { text: '{{item}} #{{index}}' } }] },
      { id: 'report', tool: 'echo', arguments: { value: '{{node.manager.result.echoed}}{{node.team.result.echoed}}' }, dependsOn: ['manager', 'team', 'each'], join: 'any' },
    ]);
    llm.push({ text }, { text: 'Mailed the manager.' });
    const start = llm.requests.length;
    const res = await t.api('POST', '/api/agent/run', { goal: 'mail big parts to the manager', config: { planApproval: false } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const events = await t.stream(res.body.runId);
    expect(events.at(-1)?.type, JSON.stringify(events.at(-1)?.data)).toBe('complete');
    const status = (id: string) => events.filter((e) => e.type === 'step_complete' && e.data.stepId === id && e.data.iteration === undefined).map((e) => e.data.status);
    expect(status('check')).toEqual(['done']);
    expect(status('manager')).toEqual(['done']);
    expect(status('team')).toEqual(['skipped']);
    expect(events.filter((e) => e.type === 'step_complete' && e.data.stepId === 'part').map((e) => e.data.result.echoed)).toEqual(['north #0', 'south #1']);
    expect(events.at(-1)?.data.result.echoed).toBe('manager');
    // the planner was taught both shapes
    const system = JSON.stringify(llm.requests[start]?.messages[0]);
    expect(system).toContain('\\"kind\\":\\"condition\\"');
    expect(system).toContain('\\"kind\\":\\"forEach\\"');
    expect(system).toContain('{{item}}');
  });

  it('sends a bad drafted condition back with its code, and fails the run naming the step and field when the repair is still bad', async () => {
    const bad = (op: string) => plan([{ id: 'check', kind: 'condition', cases: [{ name: 'big', when: { all: [{ left: '{{inputs.n}}', op }] } }] }, { id: 'go', tool: 'echo', dependsOn: ['check:big'] }]);
    llm.push({ text: bad('greater') }, { text: bad('gt') });
    const start = llm.requests.length;
    const res = await t.api('POST', '/api/agent/run', { goal: 'branch on n', inputs: { n: 3 }, config: { planApproval: false } });
    const events = await t.stream(res.body.runId);
    const repair = JSON.stringify(llm.requests[start + 1]?.messages.at(-1));
    expect(repair).toContain('[condition_operator_unknown] (cases[0].when.all[0].op)');
    expect(repair).toContain('\\"greater\\" is not an operator');
    const last = events.at(-1);
    expect(last?.type).toBe('error');
    expect(last?.data.details).toEqual([expect.objectContaining({ code: 'condition_right_missing', stepId: 'check', field: 'cases[0].when.all[0].right' })]);
    expect(last?.data.message).toContain('operator "gt" needs a "right" value');
    expect(events.some((e) => e.type === 'step_start')).toBe(false);
  });

  it('a model condition takes the port of the case the model names (JSON or bare name); an answer naming no case fails the step', async () => {
    const workflow = {
      steps: [
        { id: 'triage', kind: 'condition', instruction: 'Ticket: {{inputs.ticket}}', cases: [{ name: 'urgent', description: 'the customer cannot work at all' }, { name: 'routine', description: 'a question or a small bug' }] },
        { id: 'page', tool: 'echo', arguments: { text: 'page' }, dependsOn: ['triage:urgent'] },
        { id: 'queue', tool: 'echo', arguments: { text: 'queue' }, dependsOn: ['triage:routine'] },
        { id: 'drop', tool: 'echo', arguments: { text: 'drop' }, dependsOn: ['triage:else'] },
      ],
    };
    const go = async (answer: string, summary = true) => {
      llm.push({ text: answer }, ...(summary ? [{ text: 'summary' }] : []));
      const start = llm.requests.length;
      const res = await t.api('POST', '/api/agent/run', { goal: 'triage', inputs: { ticket: 'Nothing works since 9:00' }, config: { planApproval: false }, workflow });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const events = await t.stream(res.body.runId);
      const ran = (id: string) => events.find((e) => e.type === 'step_complete' && e.data.stepId === id)?.data.status;
      return { events, ran, asked: llm.requests[start] };
    };
    const urgent = await go('{"case": "urgent"}');
    expect(urgent.events.at(-1)?.type).toBe('complete');
    expect([urgent.ran('triage'), urgent.ran('page'), urgent.ran('queue'), urgent.ran('drop')]).toEqual(['done', 'done', 'skipped', 'skipped']);
    expect(urgent.events.find((e) => e.type === 'step_complete' && e.data.stepId === 'triage')?.data.result).toEqual({ branch: 'urgent' });
    expect(urgent.asked?.tools).toBeUndefined();
    const prompt = JSON.stringify(urgent.asked?.messages);
    expect(prompt).toContain('Nothing works since 9:00');
    expect(prompt).toContain('urgent: the customer cannot work at all');
    expect(prompt).toContain('else');

    const routine = await go('routine');
    expect([routine.ran('page'), routine.ran('queue'), routine.ran('drop')]).toEqual(['skipped', 'done', 'skipped']);
    const none = await go('none of them', false);
    expect(none.ran('triage')).toBe('failed');
    expect([none.ran('page'), none.ran('queue'), none.ran('drop')]).not.toContain('done');
    const failed = none.events.find((e) => e.type === 'step_complete' && e.data.stepId === 'triage');
    expect(failed?.data.error).toContain('The model\'s answer names no case of condition "triage": none of them');
    expect(none.events.at(-1)?.type).toBe('error');
  });

  it('fails the run with model_failed when the backend errors, without leaking the key', async () => {
    llm.push({ error: { status: 400, message: 'model scripted is overloaded' } });
    const res = await t.api('POST', '/api/agent/run', { goal: 'backend down', config: { planApproval: false } });
    const events = await t.stream(res.body.runId);
    const last = events.at(-1);
    expect(last?.type).toBe('error');
    expect(last?.data.message).toContain('overloaded');
    expect(JSON.stringify(events)).not.toContain('sk-test-secret-123');
  });

  it('answers unknown_backend for a run naming a backend that does not exist', async () => {
    const res = await t.api('POST', '/api/agent/run', { goal: 'x', config: { backend: 'nope' } });
    expect(res.status).toBe(400);
    expect(['no_chat_backend', 'unknown_backend']).toContain(res.body.error.code);
  });
});
