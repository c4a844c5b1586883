import { beforeEach, describe, expect, it } from 'vitest';
import { modeDefault } from '../../src/permissions/mode-default';
import type { PermissionGuard } from '../../src/permissions/types';
import type { ChatRequestBody } from '../support/scripted-openai';
import { scriptedHost } from '../support/scripted-host';

/** Denies write_note like a `deny: ["Tool(write_note)"]` rule would; everything else: mode default. */
const denyWriteNote: PermissionGuard = {
  async check(call) {
    if (call.tool.name === 'write_note') return { decision: 'deny', source: 'deny', rule: 'Tool(write_note)', reason: 'matched deny rule Tool(write_note)' };
    return modeDefault(call.permissionMode, call.tool.effect);
  },
};

let realGuard: PermissionGuard;

const { t, llm } = scriptedHost({
  setup: async () => {
    realGuard = t.host.ctx.guard;
    const res = await t.api('PATCH', '/api/settings', { backends: [{ id: 'local', provider: 'openai-compatible', baseURL: llm.url, model: 'scripted' }] });
    expect(res.status).toBe(200);
  },
});
beforeEach(() => {
  t.host.ctx.guard = denyWriteNote;
});

const start = async (steps: unknown[], permissionMode = 'full-access') => {
  const res = await t.api('POST', '/api/agent/run', { goal: 'model steps', config: { planApproval: false, permissionMode }, workflow: { steps } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.runId as string;
};

const lastToolResult = (req: ChatRequestBody) => req.messages.filter((m) => m.role === 'tool').at(-1);

describe('model steps', () => {
  it('sees a denied tool call as the tool result and replans around it', async () => {
    let sawDenial = '';
    llm.push(
      { toolCalls: [{ name: 'write_note', arguments: { text: 'secret plan' } }] },
      (req) => {
        sawDenial = JSON.stringify(lastToolResult(req)?.content);
        return { text: 'I will echo instead. ', toolCalls: [{ name: 'echo', arguments: { text: 'fallback' } }] };
      },
      { text: 'Used echo instead: fallback.' },
      { text: 'summary' },
    );
    const before = t.tools.calls.get('write_note') ?? 0;
    const runId = await start([{ id: 'think', instruction: 'Write a note saying hi' }]);
    const events = await t.stream(runId);
    expect(events.at(-1)?.type).toBe('complete');
    expect(sawDenial).toContain('denied: matched deny rule Tool(write_note)');
    expect(t.tools.calls.get('write_note') ?? 0).toBe(before);
    const tools = events.filter((e) => e.type === 'tool').map((e) => [e.data.phase, e.data.name, e.data.error ?? null]);
    expect(tools).toEqual([
      ['call', 'write_note', null],
      ['result', 'write_note', 'denied: matched deny rule Tool(write_note)'],
      ['call', 'echo', null],
      ['result', 'echo', null],
    ]);
    expect(events.filter((e) => e.type === 'tool').every((e) => e.data.stepId === 'think')).toBe(true);
    const done = events.find((e) => e.type === 'step_complete');
    expect(done?.data.status).toBe('done');
    expect(done?.data.result).toBe('Used echo instead: fallback.');
    const audit = events.find((e) => e.type === 'audit' && e.data.kind === 'permission' && e.data.tool === 'write_note');
    expect(audit?.data.decision).toBe('deny');
    // the model step saw the run's catalog as tools
    const names = llm.requests.at(-4)?.tools?.map((x) => x.function.name) ?? [];
    expect(names).toEqual(expect.arrayContaining(['echo', 'write_note', 'noop']));
  });

  it('replans around a deny rule configured through PATCH /api/settings (the real guard)', async () => {
    t.host.ctx.guard = realGuard;
    const saved = await t.api('PATCH', '/api/settings', { permissions: { deny: ['Tool(send_message)'], ask: [], allow: [] } });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    let denial = '';
    llm.push(
      { toolCalls: [{ name: 'send_message', arguments: { to: 'carol' } }] },
      (req) => {
        denial = JSON.stringify(lastToolResult(req)?.content);
        return { toolCalls: [{ name: 'write_note', arguments: { text: 'tell carol later' } }] };
      },
      { text: 'Could not message carol; left a note instead.' },
      { text: 'summary' },
    );
    const sent = t.tools.calls.get('send_message') ?? 0;
    const runId = await start([{ id: 'reach', instruction: 'Reach carol' }]);
    const events = await t.stream(runId);
    expect(events.at(-1)?.type).toBe('complete');
    expect(denial).toContain('denied: denied by rule Tool(send_message)');
    expect(t.tools.calls.get('send_message') ?? 0).toBe(sent);
    expect(events.find((e) => e.type === 'step_complete')?.data.result).toBe('Could not message carol; left a note instead.');
    await t.api('PATCH', '/api/settings', { permissions: { deny: [], ask: [], allow: [] } });
  });

  it('asks through the step gate in ask mode and runs the call once approved', async () => {
    t.host.ctx.guard = { check: async (call) => modeDefault(call.permissionMode, call.tool.effect) };
    llm.push({ toolCalls: [{ name: 'send_message', arguments: { to: 'bob' } }] }, { text: 'Sent to bob.' }, { text: 'summary' });
    const before = t.tools.calls.get('send_message') ?? 0;
    const runId = await start([{ id: 'notify', instruction: 'Tell bob' }], 'ask');
    const gate = await t.waitFor(runId, 'step_approval_requested');
    expect(gate.data.stepId).toBe('notify');
    const ok = await t.api('POST', `/api/agent/${runId}/approve`);
    expect(ok.status).toBe(200);
    const events = await t.stream(runId);
    expect(events.at(-1)?.type).toBe('complete');
    expect(t.tools.calls.get('send_message')).toBe(before + 1);
    expect(events.find((e) => e.type === 'step_complete')?.data.result).toBe('Sent to bob.');
  });

  it('returns parsed JSON when the instruction asks for JSON, usable by later references', async () => {
    llm.push({ text: '```json\n{"n": 42, "names": ["a"]}\n```' }, { text: 'summary' });
    const runId = await start([
      { id: 'count', instruction: 'Count the things and answer as JSON {"n": number}' },
      { id: 'use', tool: 'echo', arguments: { value: '{{node.count.result.n}}' }, dependsOn: ['count'] },
    ]);
    const events = await t.stream(runId);
    expect(events.at(-1)?.type).toBe('complete');
    expect(events.find((e) => e.type === 'step_complete' && e.data.stepId === 'count')?.data.result).toEqual({ n: 42, names: ['a'] });
    expect(events.find((e) => e.type === 'step_complete' && e.data.stepId === 'use')?.data.result.echoed).toBe(42);
  });

  it('bounds the tool loop: after 8 rounds the model gets no tools and must answer', async () => {
    for (let i = 0; i < 8; i++) llm.push({ toolCalls: [{ name: 'noop', arguments: {} }] });
    llm.push((req) => ({ text: req.tools ? 'still had tools' : 'answered without tools' }), { text: 'summary' });
    const runId = await start([{ id: 'loop', instruction: 'Call noop forever' }]);
    const events = await t.stream(runId);
    expect(events.at(-1)?.type).toBe('complete');
    expect(events.filter((e) => e.type === 'tool' && e.data.phase === 'call')).toHaveLength(8);
    expect(events.find((e) => e.type === 'step_complete')?.data.result).toBe('answered without tools');
  });

  it('fails the step with a clear error when the backend fails mid-loop', async () => {
    llm.push({ toolCalls: [{ name: 'noop', arguments: {} }] }, { error: { status: 400, message: 'context window exceeded' } });
    const runId = await start([{ id: 'boom', instruction: 'Do it' }]);
    const events = await t.stream(runId);
    expect(events.at(-1)?.type).toBe('error');
    const done = events.find((e) => e.type === 'step_complete');
    expect(done?.data.status).toBe('failed');
    expect(done?.data.error).toContain('context window exceeded');
  });

  it('gives malformed tool arguments back to the model instead of crashing', async () => {
    llm.push({ toolCalls: [{ name: 'echo', arguments: '{"text": ' }] }, { text: 'Recovered.' }, { text: 'summary' });
    const runId = await start([{ id: 'bad', instruction: 'Echo something' }]);
    const events = await t.stream(runId);
    expect(events.at(-1)?.type).toBe('complete');
    expect(events.find((e) => e.type === 'step_complete')?.data.result).toBe('Recovered.');
  });
});
