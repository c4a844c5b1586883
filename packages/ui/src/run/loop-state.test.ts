import { describe, expect, it } from 'vitest';
import { applyEvent, badgeOf, initialRun, type RawEvent } from './run-state';

/** forEach progress and skipped steps as the run panel and the canvas fold them from events. */

const plan = {
  steps: [
    { id: 'check', kind: 'condition' as const, cases: [{ name: 'big', when: { all: [{ left: 1, op: 'gt', right: 0 }] } }] },
    { id: 'small', tool: 'echo', dependsOn: ['check:else'] },
    { id: 'each', kind: 'forEach' as const, items: [1, 2, 3], dependsOn: ['check:big'], steps: [{ id: 'a', tool: 'echo' }, { id: 'b', tool: 'echo', dependsOn: ['a'] }] },
  ],
};

const fold = (events: RawEvent[]) => events.reduce(applyEvent, initialRun('r'));
let seq = 0;
const ev = (type: string, fields: Record<string, unknown>): RawEvent => ({ type, seq: ++seq, ...fields });

describe('loop progress and skips', () => {
  it('counts settled iterations live, keeps per-item results and fades a skipped step', () => {
    seq = 0;
    const events = [
      ev('plan_ready', { plan }),
      ev('step_complete', { stepId: 'check', status: 'done', result: { branch: 'big' } }),
      ev('step_complete', { stepId: 'small', status: 'skipped' }),
      ev('step_start', { stepId: 'each', arguments: { items: [1, 2, 3] } }),
      ev('step_start', { stepId: 'a', iteration: 0, parentStepId: 'each' }),
      ev('step_complete', { stepId: 'a', iteration: 0, parentStepId: 'each', status: 'done', result: 'a0' }),
      ev('step_complete', { stepId: 'b', iteration: 0, parentStepId: 'each', status: 'done', result: 'b0' }),
      ev('step_complete', { stepId: 'a', iteration: 1, parentStepId: 'each', status: 'done', result: 'a1' }),
    ];
    let v = fold(events);
    expect(v.loops.each).toMatchObject({ total: 3, done: 1 });
    expect(v.loops.each?.iterations[0]).toMatchObject({ status: 'done', result: 'b0', hasResult: true });
    expect(v.loops.each?.iterations[1]?.status).toBe('running');
    expect(badgeOf(v.steps.find((s) => s.id === 'small'))).toBe('skipped');
    expect(v.steps.find((s) => s.id === 'a')?.parentStepId).toBe('each');
    v = [ev('step_complete', { stepId: 'b', iteration: 1, parentStepId: 'each', status: 'failed', error: 'boom' }), ev('step_complete', { stepId: 'b', iteration: 1, parentStepId: 'each', status: 'failed', error: 'boom' })].reduce(applyEvent, v);
    // a replayed duplicate (same seq) and a second report of a settled iteration count once
    expect(v.loops.each).toMatchObject({ done: 2 });
    expect(v.loops.each?.iterations[1]).toMatchObject({ status: 'failed', error: 'boom' });
  });
});
