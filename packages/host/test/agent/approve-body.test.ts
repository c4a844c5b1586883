import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { classifyApproveBody } from '../../src/agent/approve-body';
import { startTestHost, type TestHost } from '../support/host';
import { rawRequest } from '../http/raw-http';

/** A gate answer must be one of the accepted shapes; anything else is a 400 and the gate stays pending. */

const HOSTILE: Array<[string, string]> = [
  ['unknown decision', '{"decision":"rejected"}'],
  ['decision approved', '{"decision":"approved"}'],
  ['decision in another case', '{"decision":"Approve"}'],
  ['decision not a string', '{"decision":true}'],
  ['an array', '[1,2]'],
  ['an empty array', '[]'],
  ['a wrapped plan', '{"plan":{"steps":[{"id":"w","tool":"noop"}]}}'],
  ['approve: true', '{"approve":true}'],
  ['extra key next to approve', '{"decision":"approve","force":true}'],
  ['reason with approve', '{"decision":"approve","reason":"x"}'],
  ['reason not a string', '{"decision":"reject","reason":{"a":1}}'],
  ['null', 'null'],
  ['a string', '"approve"'],
  ['a number', '1'],
  ['true', 'true'],
  ['a plan with extra keys', '{"steps":[{"id":"w","tool":"noop"}],"decision":"approve"}'],
  ['steps not an array', '{"steps":{"id":"w"}}'],
];

describe('classifyApproveBody (pure)', () => {
  it('accepts exactly the documented shapes', () => {
    expect(classifyApproveBody(undefined)).toEqual({ kind: 'approve' });
    expect(classifyApproveBody({})).toEqual({ kind: 'approve' });
    expect(classifyApproveBody({ decision: 'approve' })).toEqual({ kind: 'approve' });
    expect(classifyApproveBody({ decision: 'reject' })).toEqual({ kind: 'reject' });
    expect(classifyApproveBody({ decision: 'reject', reason: 'no' })).toEqual({ kind: 'reject', reason: 'no' });
    expect(classifyApproveBody({ goal: 'g', steps: [] }).kind).toBe('plan');
  });
  for (const [name, body] of HOSTILE) {
    it(`refuses ${name}`, () => {
      expect(() => classifyApproveBody(JSON.parse(body))).toThrow(expect.objectContaining({ code: 'invalid_approval' }));
    });
  }
});

let t: TestHost;
beforeAll(async () => {
  t = await startTestHost();
});
afterAll(async () => t.close());

async function post(runId: string, body: string) {
  return rawRequest(t.host.port, { method: 'POST', target: `/api/agent/${runId}/approve`, headers: { 'x-fengyu-token': t.host.token, 'content-type': 'application/json' }, body });
}

describe('POST /api/agent/{runId}/approve with a hostile body', () => {
  it('the plan gate stays pending and nothing runs', async () => {
    const before = t.tools.calls.get('write_note') ?? 0;
    const res = await t.api('POST', '/api/agent/run', { goal: 'g', workflow: { steps: [{ id: 'w', tool: 'write_note', arguments: { text: 'x' } }] }, config: { permissionMode: 'full-access' } });
    const runId = res.body.runId as string;
    await t.waitFor(runId, 'plan_approval_requested');
    for (const [name, body] of HOSTILE) {
      const r = await post(runId, body);
      expect(r.status, name).toBe(400);
      expect(r.json.error.code, name).toBe('invalid_approval');
      expect((await t.api('GET', `/api/agent/runs/${runId}`)).body.status, name).toBe('awaiting_plan_approval');
    }
    expect(t.tools.calls.get('write_note') ?? 0).toBe(before);
    // The happy path still works afterwards.
    expect((await post(runId, '{"decision":"approve"}')).status).toBe(200);
    expect((await t.stream(runId)).at(-1)?.type).toBe('complete');
    expect(t.tools.calls.get('write_note')).toBe(before + 1);
  });

  it('the step gate stays pending and the step does not run', async () => {
    const before = t.tools.calls.get('write_note') ?? 0;
    const res = await t.api('POST', '/api/agent/run', { goal: 'g', workflow: { steps: [{ id: 'w', tool: 'write_note', arguments: { text: 'x' } }] }, config: { planApproval: false } });
    const runId = res.body.runId as string;
    await t.waitFor(runId, 'step_approval_requested');
    for (const [name, body] of HOSTILE) {
      const r = await post(runId, body);
      expect(r.status, name).toBe(400);
      expect((await t.api('GET', `/api/agent/runs/${runId}`)).body.status, name).toBe('awaiting_step_approval');
    }
    expect(t.tools.calls.get('write_note') ?? 0).toBe(before);
    // A well-formed plan at a step gate is refused too, and the gate stays.
    expect((await post(runId, '{"steps":[{"id":"w","tool":"noop"}]}')).status).toBe(400);
    expect((await t.api('GET', `/api/agent/runs/${runId}`)).body.status).toBe('awaiting_step_approval');
    expect((await post(runId, '{"decision":"reject","reason":"no"}')).status).toBe(200);
    expect((await t.stream(runId)).at(-1)?.type).toBe('error');
    expect(t.tools.calls.get('write_note') ?? 0).toBe(before);
  });

  it('an empty body and {} approve', async () => {
    for (const body of ['', '{}']) {
      const res = await t.api('POST', '/api/agent/run', { goal: 'g', workflow: { steps: [{ id: 'n', tool: 'noop' }] }, config: { permissionMode: 'full-access' } });
      await t.waitFor(res.body.runId, 'plan_approval_requested');
      expect((await post(res.body.runId, body)).status, JSON.stringify(body)).toBe(200);
      expect((await t.stream(res.body.runId)).at(-1)?.type).toBe('complete');
    }
  });
});
