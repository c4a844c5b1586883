import type { AgentPlan } from '@fengyu/protocol';
import { validatePlan } from '@fengyu/protocol';
import { describe, expect, it } from 'vitest';
import { argumentText, moveStep, parseArgumentText, planChanged, problemsByStep, removeArgument, removeStep, setArgument, setInstruction, setRequiresApproval, setTitle, trimSteps } from './plan-edit';

const plan: AgentPlan = {
  goal: 'g',
  steps: [
    { id: 'a', tool: 'echo', arguments: { text: 'hi' } },
    { id: 'b', instruction: 'summarize {{steps.1.result}}', dependsOn: ['a'] },
    { id: 'c', tool: 'echo', arguments: { value: 3 }, dependsOn: ['a', 'b'] },
  ],
};

describe('plan editing', () => {
  it('moves steps without mutating the input, clamping out-of-range targets', () => {
    const moved = moveStep(plan, 2, 0);
    expect(moved.steps.map((s) => s.id)).toEqual(['c', 'a', 'b']);
    expect(plan.steps.map((s) => s.id)).toEqual(['a', 'b', 'c']);
    expect(moveStep(plan, 0, 99).steps.map((s) => s.id)).toEqual(['b', 'c', 'a']);
    expect(moveStep(plan, 7, 0).steps.map((s) => s.id)).toEqual(['a', 'b', 'c']);
  });

  it('keeps positional {{steps.N}} references pointing at the same step after moves and removals', () => {
    const p: AgentPlan = {
      steps: [
        { id: 'x', tool: 'echo', arguments: { text: 'a' } },
        { id: 'y', tool: 'echo', arguments: { text: 'b' } },
        { id: 'z', instruction: 'join {{steps.1.result.echoed}} and {{ steps.2.result }}', arguments: { list: ['{{steps.2.result.echoed}}', { deep: '{{steps.1.result}}' }] } },
      ],
    };
    const moved = moveStep(p, 0, 1);
    expect(moved.steps.map((s) => s.id)).toEqual(['y', 'x', 'z']);
    expect(moved.steps[2]?.instruction).toBe('join {{steps.2.result.echoed}} and {{ steps.1.result }}');
    expect(moved.steps[2]?.arguments).toEqual({ list: ['{{steps.1.result.echoed}}', { deep: '{{steps.2.result}}' }] });
    const removed = removeStep(p, 'x');
    expect(removed.steps[1]?.instruction).toBe('join {{node.x.result.echoed}} and {{ steps.1.result }}');
    expect(p.steps[2]?.instruction).toBe('join {{steps.1.result.echoed}} and {{ steps.2.result }}');
  });

  it('removes a step and drops it from the dependsOn of the rest', () => {
    const next = removeStep(plan, 'b');
    expect(next.steps.map((s) => s.id)).toEqual(['a', 'c']);
    expect(next.steps[1]?.dependsOn).toEqual(['a']);
    const noA = removeStep(plan, 'a');
    expect(noA.steps[0]?.dependsOn).toBeUndefined();
  });

  it('trims to the first N steps (at least one) with no dangling dependencies', () => {
    expect(trimSteps(plan, 1).steps.map((s) => s.id)).toEqual(['a']);
    expect(trimSteps(plan, 0).steps).toHaveLength(1);
    expect(trimSteps(plan, 10).steps).toHaveLength(3);
    const ctx = { tool: (name: string) => (name === 'echo' ? ({ name: 'echo', inputSchema: { type: 'object' }, effect: 'read', idempotent: false, available: true } as never) : undefined), inputNames: new Set<string>() };
    for (const keep of [1, 2, 3]) expect(validatePlan(trimSteps(plan, keep), ctx).ok, `keep ${keep}`).toBe(true);
    for (const id of ['a', 'b', 'c']) {
      const r = validatePlan(removeStep(plan, id), ctx);
      // removing a step another one references by {{steps.N}} is reported by the host's validation, not hidden
      if (id !== 'a') expect(r.ok, `remove ${id}`).toBe(true);
    }
  });

  it('changes instructions, titles, approval and arguments', () => {
    let p = setInstruction(plan, 'b', 'shorter');
    expect(p.steps[1]?.instruction).toBe('shorter');
    p = setTitle(p, 'a', 'Say hi');
    expect(p.steps[0]?.title).toBe('Say hi');
    p = setTitle(p, 'a', '  ');
    expect('title' in (p.steps[0] ?? {})).toBe(false);
    p = setRequiresApproval(p, 'c', true);
    expect(p.steps[2]?.requiresApproval).toBe(true);
    p = setRequiresApproval(p, 'c', false);
    expect('requiresApproval' in (p.steps[2] ?? {})).toBe(false);
    p = setArgument(p, 'c', 'value', '42');
    expect(p.steps[2]?.arguments?.value).toBe(42);
    p = setArgument(p, 'a', 'text', 'hello there');
    expect(p.steps[0]?.arguments?.text).toBe('hello there');
    p = removeArgument(p, 'a', 'text');
    expect(p.steps[0]?.arguments).toEqual({});
    expect(plan.steps[0]?.arguments).toEqual({ text: 'hi' });
  });

  it('parses typed argument text: JSON keeps its type, anything else stays a string', () => {
    expect(parseArgumentText('3')).toBe(3);
    expect(parseArgumentText('true')).toBe(true);
    expect(parseArgumentText('null')).toBeNull();
    expect(parseArgumentText('{"a":[1]}')).toEqual({ a: [1] });
    expect(parseArgumentText('"quoted"')).toBe('quoted');
    expect(parseArgumentText('{{steps.1.result}}')).toBe('{{steps.1.result}}');
    expect(parseArgumentText('{not json')).toBe('{not json');
    expect(parseArgumentText('12 apples')).toBe('12 apples');
    expect(parseArgumentText('')).toBe('');
    expect(argumentText('x')).toBe('x');
    expect(argumentText({ a: 1 })).toBe('{"a":1}');
    expect(parseArgumentText(argumentText({ a: 1 }))).toEqual({ a: 1 });
  });

  it('tells an edited plan from the original', () => {
    expect(planChanged(plan, structuredClone(plan))).toBe(false);
    expect(planChanged(plan, moveStep(plan, 0, 1))).toBe(true);
  });

  it('maps validation details to steps, with plan-level problems under ""', () => {
    const m = problemsByStep([
      { code: 'unknown_tool', stepId: 'a', field: 'tool', message: 'unknown tool' },
      { code: 'too_many_steps', message: 'too many' },
      'junk',
    ]);
    expect(m.get('a')).toEqual(['tool: unknown tool']);
    expect(m.get('')).toHaveLength(2);
    expect(problemsByStep(undefined).size).toBe(0);
  });
});
