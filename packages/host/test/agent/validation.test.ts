import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';

let t: TestHost;
beforeAll(async () => {
  t = await startTestHost();
});
afterAll(async () => t.close());

async function rejected(workflow: unknown, extra: Record<string, unknown> = {}) {
  const before = t.tools.calls.size;
  const res = await t.api('POST', '/api/agent/run', { workflow, config: { planApproval: false, permissionMode: 'full-access' }, ...extra });
  expect(res.status, JSON.stringify(res.body)).toBe(400);
  expect(t.tools.calls.size).toBe(before);
  return res.body.error as { code: string; message: string; details: Array<{ code: string; stepId?: string; field?: string; message: string }> };
}

const codes = (e: { details: Array<{ code: string }> }) => e.details.map((d) => d.code).sort();

describe('plan validation before any tool runs', () => {
  it('rejects a cycle', async () => {
    const e = await rejected({ steps: [{ id: 'a', tool: 'noop', dependsOn: ['b'] }, { id: 'b', tool: 'noop', dependsOn: ['a'] }] });
    expect(codes(e)).toContain('plan_cycle');
    expect(e.details.find((d) => d.code === 'plan_cycle')?.message).toMatch(/a → b → a|b → a → b/);
  });

  it('rejects 65 steps', async () => {
    const steps = Array.from({ length: 65 }, (_, i) => ({ id: `s${i}`, tool: 'noop' }));
    expect(codes(await rejected({ steps }))).toEqual(['plan_too_many_steps']);
  });

  it('rejects an unknown tool, a dangling dependency and a non-prerequisite reference — all at once', async () => {
    const e = await rejected({
      steps: [
        { id: 'a', tool: 'nope' },
        { id: 'b', tool: 'echo', dependsOn: ['ghost'] },
        { id: 'c', tool: 'echo', arguments: { value: '{{node.b.result}}' } },
        { id: 'd', tool: 'echo', arguments: { value: '{{steps.9.result}}' }, dependsOn: ['c'] },
        { id: 'e', tool: 'echo', arguments: { value: '{{node.a.result' } },
      ],
    });
    expect(codes(e)).toEqual(['ref_malformed', 'ref_not_prerequisite', 'ref_unknown_step', 'step_unknown_dependency', 'step_unknown_tool']);
    expect(e.message).toMatch(/5 problem/);
    expect(e.details.every((d) => d.stepId && d.message)).toBe(true);
  });

  it('rejects an undeclared input and an undeclared file', async () => {
    const e = await rejected({ steps: [{ id: 'a', tool: 'echo', arguments: { value: '{{inputs.region}}', text: '@file:book' } }] }, { inputs: { other: 1 } });
    expect(codes(e)).toEqual(['ref_undeclared_file', 'ref_undeclared_input']);
  });

  it('rejects retries on a write tool and out-of-range attempts', async () => {
    const e = await rejected({ steps: [{ id: 'w', tool: 'write_note', arguments: { text: 'x' }, retry: { maxAttempts: 3 } }, { id: 'r', tool: 'noop', retry: { maxAttempts: 9 } }] });
    expect(codes(e)).toEqual(['retry_range', 'retry_unsafe']);
  });

  it('rejects literal arguments that break the tool schema, but not placeholders', async () => {
    const e = await rejected({ steps: [{ id: 's', tool: 'slow', arguments: { ms: 'soon' } }] });
    expect(codes(e)).toEqual(['step_invalid_arguments']);
    expect(e.details[0]?.field).toBe('arguments.ms');
    const ok = await t.api('POST', '/api/agent/run', { inputs: { ms: 1 }, config: { planApproval: false, permissionMode: 'full-access' }, workflow: { steps: [{ id: 's', tool: 'slow', arguments: { ms: '{{inputs.ms}}' } }] } });
    expect(ok.status).toBe(200);
    // its call must not land in the next test's count of calls
    await t.waitFor(ok.body.runId, 'complete');
  });

  it('rejects structural problems with their paths', async () => {
    const e = await rejected({ steps: [{ id: '1bad', tool: 'noop', surprise: true }] });
    expect(e.details.map((d) => d.field)).toEqual(expect.arrayContaining(['.steps[0].id', '.steps[0]']));
  });

  it('rejects a model step without instruction, duplicate ids and self dependencies', async () => {
    const e = await rejected({ steps: [{ id: 'a' }, { id: 'a', tool: 'noop' }, { id: 'b', tool: 'noop', dependsOn: ['b'] }] });
    expect(codes(e)).toEqual(expect.arrayContaining(['step_missing_instruction', 'step_duplicate_id', 'step_self_dependency']));
  });

  it('rejects malformed JSON and oversized bodies with the envelope', async () => {
    const bad = await t.api('POST', '/api/agent/run', '{"workflow": {', {});
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_json');
    const big = await t.api('POST', '/api/agent/run', { goal: 'x', workflow: { steps: [{ id: 'a', tool: 'echo', arguments: { value: 'y'.repeat(1_100_000) } }] } });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('payload_too_large');
  });

  it('localizes problems in Chinese', async () => {
    const res = await t.api('POST', '/api/agent/run', { workflow: { steps: [{ id: 'a', tool: 'nope' }] } }, { 'accept-language': 'zh-CN' });
    expect(res.body.error.message).toMatch(/工作流无效/);
    expect(res.body.error.details[0].message).toMatch(/未知工具/);
  });

  it('read-only batch rejects any non-read step before anything starts', async () => {
    const res = await t.api('POST', '/api/agent/batch', {
      capabilityMode: 'read-only',
      runs: [{ workflow: { steps: [{ id: 'a', tool: 'noop' }] } }, { workflow: { steps: [{ id: 'b', tool: 'write_note', arguments: { text: 'x' } }] } }],
    });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.error.details)).toContain('read_only_step');
    const list = await t.api('GET', '/api/agent/runs?limit=200');
    expect(list.body.runs.some((r: { origin: string }) => r.origin === 'batch')).toBe(false);
  });
});
