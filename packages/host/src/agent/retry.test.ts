import type { AgentPlan, PlanStep } from '@fengyu/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { retrySplit } from './retry';
import { fingerprint } from './run-text';
import type { StepExecution } from './run.repository';

const ids = ['a', 'b', 'c', 'd', 'e'];
const step = fc.record({ tool: fc.constantFrom('echo', 'slow'), value: fc.integer({ min: 0, max: 2 }), deps: fc.subarray(ids) });
const plan = fc.array(step, { minLength: 5, maxLength: 5 }).map((xs): AgentPlan => ({ steps: xs.map((x, i) => ({ id: ids[i] as string, tool: x.tool, arguments: { value: x.value }, dependsOn: x.deps.filter((d) => d < (ids[i] as string)) })) }));

const exec = (s: PlanStep, status: StepExecution['status']): StepExecution => ({ stepId: s.id, status, attempts: 1, result: s.id, fingerprint: fingerprint(s), reused: false });

describe('retrySplit', () => {
  it('reuses exactly the done executions whose step is unchanged (tool, arguments, dependencies); every other step reruns', () => {
    fc.assert(
      fc.property(plan, plan, fc.array(fc.constantFrom<StepExecution['status']>('done', 'failed', 'uncertain', 'running'), { minLength: 5, maxLength: 5 }), (old, next, statuses) => {
        const executions = old.steps.map((s, i) => exec(s, statuses[i] as StepExecution['status']));
        const split = retrySplit(old, next, executions);
        expect([...split.reused, ...split.rerun].sort()).toEqual(next.steps.map((s) => s.id).sort());
        for (const s of next.steps) {
          const i = ids.indexOf(s.id);
          const before = old.steps[i] as PlanStep;
          const same = JSON.stringify([before.tool, before.arguments, [...(before.dependsOn ?? [])].sort()]) === JSON.stringify([s.tool, s.arguments, [...(s.dependsOn ?? [])].sort()]);
          expect(split.reused.includes(s.id)).toBe(same && statuses[i] === 'done');
          if (split.reused.includes(s.id)) expect(split.reuse.get(s.id)?.result).toBe(s.id);
        }
      }),
    );
  });

  it('the same plan reuses every done step, whatever the order of dependsOn', () => {
    const old: AgentPlan = { steps: [{ id: 'a', tool: 'echo' }, { id: 'b', tool: 'echo' }, { id: 'c', tool: 'echo', dependsOn: ['a', 'b'] }] };
    const next: AgentPlan = { steps: [old.steps[0] as PlanStep, old.steps[1] as PlanStep, { id: 'c', tool: 'echo', dependsOn: ['b', 'a'] }] };
    const split = retrySplit(old, next, [exec(old.steps[0] as PlanStep, 'done'), exec(old.steps[1] as PlanStep, 'failed'), exec(old.steps[2] as PlanStep, 'done')]);
    expect(split).toMatchObject({ reused: ['a', 'c'], rerun: ['b'] });
  });
});
