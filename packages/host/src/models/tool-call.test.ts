import { FengYuError, stableHash } from '@fengyu/protocol';
import { describe, expect, it } from 'vitest';
import type { GuardDecision, PermissionGuard } from '../permissions/types';
import type { Tool } from '../tools/tool';
import { type CallEnv, callToolGuarded } from './tool-call';

const tool = (invoke: Tool['invoke'], extra: Partial<Tool> = {}): Tool => ({
  name: 't',
  description: 'd',
  inputSchema: { type: 'object' },
  effect: 'write',
  source: 'builtin',
  id: 'builtin:t',
  schemaRevision: stableHash({}),
  idempotent: false,
  available: true,
  invoke,
  ...extra,
});

function env(decision: GuardDecision, approve = true) {
  const events: Array<[string, Record<string, unknown>]> = [];
  const observed: unknown[] = [];
  const asked: string[] = [];
  const guard: PermissionGuard = {
    check: async () => decision,
    observe: async (_call, outcome) => {
      observed.push(outcome);
      return [{ kind: 'hook', hook: 'post' }];
    },
  };
  const e: CallEnv = {
    owner: 'o',
    caller: 'chat',
    permissionMode: 'ask',
    guard,
    grants: [],
    signal: new AbortController().signal,
    emit: (type, payload) => events.push([type, payload]),
    askApproval: async (reason) => {
      asked.push(reason);
      return approve;
    },
  };
  return { e, events, observed, asked };
}

const allow: GuardDecision = { decision: 'allow', source: 'mode', reason: 'ok' };

describe('callToolGuarded', () => {
  it('allow: runs, emits call/result, audits the decision and observes', async () => {
    const { e, events, observed } = env(allow);
    expect(await callToolGuarded(e, tool(async (a) => ({ got: a.x })), { x: 1 }, 'c1')).toEqual({ got: 1 });
    expect(events.map(([type, p]) => `${type}:${p.phase ?? p.kind}`)).toEqual(['tool:call', 'audit:permission', 'tool:result', 'audit:hook']);
    expect(observed).toEqual([{ ok: true, result: { got: 1 } }]);
  });

  it('deny: never runs and gives the model the reason', async () => {
    let ran = false;
    const { e, events } = env({ decision: 'deny', source: 'deny', rule: 'Tool(t)', reason: 'denied by rule Tool(t)' });
    const out = await callToolGuarded(e, tool(async () => { ran = true; }), {}, 'c1');
    expect(ran).toBe(false);
    expect(out).toEqual({ error: 'denied: denied by rule Tool(t)' });
    expect(events.find(([, p]) => p.phase === 'result')?.[1].error).toBe('denied: denied by rule Tool(t)');
    expect(events.find(([, p]) => p.kind === 'permission')?.[1]).toMatchObject({ decision: 'deny', rule: 'Tool(t)', caller: 'chat' });
  });

  it('ask: approval runs the call, rejection denies it', async () => {
    const yes = env({ decision: 'ask', source: 'mode', reason: 'ask mode' }, true);
    expect(await callToolGuarded(yes.e, tool(async () => 'done'), {}, 'c')).toBe('done');
    expect(yes.asked).toEqual(['ask mode']);
    const no = env({ decision: 'ask', source: 'mode', reason: 'ask mode' }, false);
    expect(await callToolGuarded(no.e, tool(async () => 'done'), {}, 'c')).toEqual({ error: 'denied: ask mode (not approved)' });
  });

  it('failures come back as {success:false, error} with localized FengYuError text', async () => {
    const { e, observed } = env(allow);
    expect(await callToolGuarded(e, tool(async () => { throw new Error('boom'); }), {}, 'c')).toEqual({ success: false, error: 'boom' });
    expect(await callToolGuarded(e, tool(async () => { throw new FengYuError('tool_timeout', { name: 't', seconds: 5 }); }), {}, 'c')).toEqual({ success: false, error: 'Tool "t" timed out after 5 s.' });
    expect(await callToolGuarded(e, tool(async () => 'x', { available: false }), {}, 'c')).toMatchObject({ success: false });
    expect(observed).toHaveLength(3);
  });

  it('rethrows when the call was cancelled', async () => {
    const { e } = env(allow);
    const abort = new AbortController();
    abort.abort();
    await expect(callToolGuarded({ ...e, signal: abort.signal }, tool(async () => { throw new Error('aborted'); }), {}, 'c')).rejects.toThrow('aborted');
  });
});
