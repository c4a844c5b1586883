import { describe, expect, it } from 'vitest';
import { applyEvent, badgeOf, failedStepsOf, failedStepText, initialRun, type RawEvent } from './run-state';

const plan = { steps: [{ id: 'a', tool: 'x' }, { id: 'b', tool: 'y', requiresApproval: true }] };

function fold(events: RawEvent[]) {
  return events.reduce(applyEvent, initialRun('r1'));
}

describe('run panel state', () => {
  it('follows plan review, step approval, results and completion', () => {
    const v = fold([
      { type: 'run_created', seq: 1, status: 'planning' },
      { type: 'plan_approval_requested', seq: 2, gateId: 'g1', plan },
      { type: 'plan_approved', seq: 3, gateId: 'g1', plan },
      { type: 'step_start', seq: 4, stepId: 'a', index: 0 },
      { type: 'step_complete', seq: 5, stepId: 'a', index: 0, status: 'done', result: { n: 1 }, attempts: 1, durationMs: 3 },
      { type: 'step_approval_requested', seq: 6, gateId: 'g2', stepId: 'b', reason: 'external' },
    ]);
    expect(v.status).toBe('awaiting_step_approval');
    expect(v.gate).toEqual({ kind: 'step', gateId: 'g2', stepId: 'b', reason: 'external' });
    expect(v.steps.map((s) => [s.id, s.status])).toEqual([
      ['a', 'done'],
      ['b', 'awaiting_approval'],
    ]);
    expect(v.steps[0]).toMatchObject({ hasResult: true, result: { n: 1 } });
    expect(badgeOf(v.steps[1])).toBe('awaiting');
    const end = [
      { type: 'step_approved', seq: 7, gateId: 'g2', stepId: 'b' },
      { type: 'step_complete', seq: 8, stepId: 'b', index: 1, status: 'failed', error: 'boom', attempts: 1, durationMs: 1 },
      { type: 'error', seq: 9, message: 'step b failed' },
    ].reduce(applyEvent, v);
    expect(end).toMatchObject({ status: 'failed', ended: true, error: 'step b failed', gate: undefined });
    expect(badgeOf(end.steps[1])).toBe('failed');
  });

  it('ignores replayed duplicates (reconnects resend from Last-Event-ID)', () => {
    const once = fold([{ type: 'plan_token', seq: 1, text: 'ab' }]);
    const twice = applyEvent(once, { type: 'plan_token', seq: 1, text: 'ab' });
    expect(twice.planText).toBe('ab');
  });

  it('a cancelled run ends without complete', () => {
    const v = fold([{ type: 'plan_ready', seq: 1, plan }, { type: 'cancelled', seq: 2 }]);
    expect(v).toMatchObject({ status: 'cancelled', ended: true });
    expect(v.steps.every((s) => s.status === 'pending')).toBe(true);
  });

  it('marks steps reused by a retry and lists the failures a run completed past', () => {
    const v = fold([
      { type: 'plan_ready', seq: 1, plan },
      { type: 'step_complete', seq: 2, stepId: 'a', index: 0, status: 'done', result: 1, attempts: 1, durationMs: 0, reused: true },
      { type: 'step_complete', seq: 3, stepId: 'b', index: 1, status: 'failed', error: 'exit 3', attempts: 1, durationMs: 5 },
      { type: 'complete', seq: 4, summary: 's', failedSteps: [{ stepId: 'b', error: { code: 'command_exit_nonzero', message: 'exit 3' } }, { iteration: 1 }, null] },
    ]);
    expect(v.steps.map((s) => [s.id, s.reused])).toEqual([
      ['a', true],
      ['b', false],
    ]);
    expect(v.status).toBe('completed');
    expect(v.failedSteps).toEqual([{ stepId: 'b', error: { code: 'command_exit_nonzero', message: 'exit 3' } }]);
    expect(failedStepText(v.failedSteps[0] as never)).toBe('exit 3 (command_exit_nonzero)');
    expect(failedStepsOf([{ stepId: 'x', error: 'not an object' }])).toEqual([]);
  });
});
