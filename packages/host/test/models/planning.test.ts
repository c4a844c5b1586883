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
