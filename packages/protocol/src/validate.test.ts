import { describe, expect, it } from 'vitest';
import { type ToolInfo, validatePlan } from './validate';

const tools: Record<string, ToolInfo> = {
  echo: { name: 'echo', inputSchema: { type: 'object', properties: { value: {} } }, effect: 'read', idempotent: false, source: 'builtin', available: true },
};
const ctx = { tool: (n: string) => tools[n], inputNames: new Set<string>() };
const codes = (r: ReturnType<typeof validatePlan>) => (r.ok ? [] : r.problems.map((p) => p.code).sort());

describe('validatePlan reports every problem in one answer', () => {
  it('keeps checking sound steps when another step is malformed', () => {
    const r = validatePlan({ steps: [{ id: 'a', tool: 'echo', retry: 'many' }, { id: 'b', tool: 'nope' }, { id: 'c', tool: 'echo', dependsOn: ['ghost'] }] }, ctx);
    expect(codes(r)).toEqual(['plan_schema', 'step_unknown_dependency', 'step_unknown_tool']);
  });

  it('keeps checking the steps when a plan-level field has the wrong type', () => {
    const r = validatePlan({ goal: 5, steps: [{ id: 'a', tool: 'nope' }] }, ctx);
    expect(codes(r)).toEqual(['plan_schema', 'step_unknown_tool']);
  });

  it('does not report a dependency on a malformed step as unknown', () => {
    const r = validatePlan({ steps: [{ id: 'a', tool: 7 }, { id: 'b', tool: 'echo', dependsOn: ['a'] }] }, ctx);
    expect(codes(r)).toEqual(['plan_schema']);
  });

  it('still finds a cycle among the sound steps', () => {
    const r = validatePlan({ steps: [{ id: 'x', tool: 1 }, { id: 'a', tool: 'echo', dependsOn: ['b'] }, { id: 'b', tool: 'echo', dependsOn: ['a'] }] }, ctx);
    expect(codes(r)).toEqual(['plan_cycle', 'plan_schema']);
  });
});
