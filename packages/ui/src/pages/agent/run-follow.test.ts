import { describe, expect, it } from 'vitest';
import { applyAgentEvent, initialAgentRun, progressOf } from './run-follow';

const plan = { steps: [{ id: 'a', tool: 'echo' }, { id: 'b', tool: 'write' }] };

describe('agent run fold', () => {
  it('keeps the step gate detail, clears it on approval or rejection, and counts progress', () => {
    let s = initialAgentRun('r1');
    let seq = 0;
    const ev = (e: Record<string, unknown>) => (s = applyAgentEvent(s, { seq: ++seq, ts: '2026-01-01T00:00:00.000Z', ...e } as never));
    ev({ type: 'plan_approval_requested', gateId: 'g0', plan });
    expect(s.view.gate?.kind).toBe('plan');
    ev({ type: 'plan_approved', gateId: 'g0', plan, edited: false });
    ev({ type: 'step_start', stepId: 'a', index: 1 });
    expect(s.startedAt.a).toBeDefined();
    ev({ type: 'step_complete', stepId: 'a', index: 1, status: 'done', result: { ok: 1 }, attempts: 1, durationMs: 5 });
    ev({ type: 'step_approval_requested', gateId: 'g1', stepId: 'b', reason: 'write', tool: 'write', arguments: { p: 1 }, effect: 'write' });
    expect(s.gate).toMatchObject({ gateId: 'g1', tool: 'write', effect: 'write' });
    expect(s.view.status).toBe('awaiting_step_approval');
    ev({ type: 'audit', kind: 'step_rejected', stepId: 'b', reason: 'no' });
    expect(s.gate).toBeUndefined();
    expect(s.view.gate).toBeUndefined();
    expect(s.audits).toHaveLength(1);
    expect(progressOf(s.view)).toEqual({ done: 1, total: 2, failed: 0 });
    const before = s;
    s = applyAgentEvent(s, { type: 'step_start', seq: 2, stepId: 'zzz' });
    expect(s).toBe(before);
  });
});
