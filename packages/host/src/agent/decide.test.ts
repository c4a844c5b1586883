import type { PlanStep } from '@fengyu/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decide, runResult, type StepStatus } from './decide';

const plan: PlanStep[] = [
  { id: 'a', tool: 't' },
  { id: 'b', tool: 't', dependsOn: ['a'] },
  { id: 'c', tool: 't', dependsOn: ['a'] },
  { id: 'd', tool: 't', dependsOn: ['b', 'c'] },
];

const st = (o: Record<string, StepStatus>) => new Map(Object.entries(o));

describe('decide', () => {
  it('launches roots, then both middle steps together, then the sink', () => {
    expect(decide({ steps: plan, status: st({}), maxConcurrency: 8, cancelRequested: false })).toEqual({ kind: 'launch', stepIds: ['a'] });
    expect(decide({ steps: plan, status: st({ a: 'done' }), maxConcurrency: 8, cancelRequested: false })).toEqual({ kind: 'launch', stepIds: ['b', 'c'] });
    expect(decide({ steps: plan, status: st({ a: 'done', b: 'done', c: 'active' }), maxConcurrency: 8, cancelRequested: false })).toEqual({ kind: 'wait' });
    expect(decide({ steps: plan, status: st({ a: 'done', b: 'done', c: 'done', d: 'done' }), maxConcurrency: 8, cancelRequested: false })).toEqual({ kind: 'finish', outcome: 'completed' });
  });

  it('respects the concurrency bound', () => {
    expect(decide({ steps: plan, status: st({ a: 'done' }), maxConcurrency: 1, cancelRequested: false })).toEqual({ kind: 'launch', stepIds: ['b'] });
  });

  it('stops launching after a failure and finishes when nothing is active', () => {
    expect(decide({ steps: plan, status: st({ a: 'done', b: 'failed', c: 'active' }), maxConcurrency: 8, cancelRequested: false })).toEqual({ kind: 'wait' });
    expect(decide({ steps: plan, status: st({ a: 'done', b: 'failed', c: 'done' }), maxConcurrency: 8, cancelRequested: false })).toEqual({ kind: 'finish', outcome: 'failed' });
  });

  it('cancels once active steps settle', () => {
    expect(decide({ steps: plan, status: st({ a: 'active' }), maxConcurrency: 8, cancelRequested: true })).toEqual({ kind: 'wait' });
    expect(decide({ steps: plan, status: st({ a: 'done' }), maxConcurrency: 8, cancelRequested: true })).toEqual({ kind: 'finish', outcome: 'cancelled' });
  });

  it('with counts of unmet prerequisites, launches the pending steps whose count is 0, in plan order', () => {
    // the counts decide, not the dependencies: `d` is ready by its count although `b` is only active
    const status = st({ a: 'done', b: 'active' });
    expect(decide({ steps: plan, status, maxConcurrency: 8, cancelRequested: false, unmet: [0, 0, 0, 0] })).toEqual({ kind: 'launch', stepIds: ['c', 'd'] });
    expect(decide({ steps: plan, status, maxConcurrency: 8, cancelRequested: false, unmet: [0, 0, 1, 0] })).toEqual({ kind: 'launch', stepIds: ['d'] });
    expect(decide({ steps: plan, status, maxConcurrency: 2, cancelRequested: false, unmet: [0, 0, 0, 0] })).toEqual({ kind: 'launch', stepIds: ['c'] });
  });

  it('never launches a step whose prerequisites are not done (property)', () => {
    const statuses = fc.constantFrom<StepStatus>('pending', 'active', 'done');
    fc.assert(
      fc.property(fc.record({ a: statuses, b: statuses, c: statuses, d: statuses }), (s) => {
        const d = decide({ steps: plan, status: st(s), maxConcurrency: 8, cancelRequested: false });
        if (d.kind !== 'launch') return true;
        return d.stepIds.every((id) => (plan.find((p) => p.id === id)?.dependsOn ?? []).every((dep) => s[dep as 'a'] === 'done') && s[id as 'a'] === 'pending');
      }),
    );
  });

  it('returns the sink result', () => {
    expect(runResult(plan, new Map([['d', 42]]))).toBe(42);
    expect(runResult([{ id: 'x', tool: 't' }, { id: 'y', tool: 't' }], new Map([['x', 1], ['y', 2]]))).toEqual({ x: 1, y: 2 });
  });
});
