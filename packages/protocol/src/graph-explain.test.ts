import { describe, expect, it } from 'vitest';
import { checkGraph } from './graph-check';
import { explainDiagnostic } from './graph-explain';
import { planToGraph } from './graph-layout';
import type { AgentPlan } from './plan';

const tool = (name: string) => (name === 'echo' ? { name, description: '', effect: 'read' as const, inputSchema: { type: 'object' }, available: true } : undefined);
const explain = (plan: AgentPlan, locale: 'en' | 'zh-CN' = 'en') => {
  const g = planToGraph(plan);
  return checkGraph(g, { tool: tool as never }).map((d) => explainDiagnostic(d, g, locale));
};

describe('explainDiagnostic', () => {
  it('names the ports a branching step offers, or says a step has none', () => {
    const branch = explain({ steps: [{ id: 'a', tool: 'echo', onError: 'branch' }, { id: 'b', tool: 'echo', dependsOn: ['a:big'] }] });
    expect(branch).toEqual(['Step "b" is connected to the port "big" of "a" (its field dependsOn), but "a" only offers "ok", "error". Connect the step to one of those ports.']);
    const none = explain({ steps: [{ id: 'a', tool: 'echo' }, { id: 'b', tool: 'echo', dependsOn: ['a:ok'] }] }, 'zh-CN');
    expect(none).toEqual(['步骤 "b" 连接到了 "a" 的端口 "ok"（字段 dependsOn），但 "a" 是 tool 步骤，没有端口。请直接连接到 "a"，或在中间加一个条件。']);
  });

  it('locates a comparison problem inside a loop body by case and 1-based position; other problems keep their message', () => {
    const plan: AgentPlan = {
      steps: [{ id: 'each', kind: 'forEach', items: [1, 2], steps: [{ id: 'c', kind: 'condition', cases: [{ name: 'x', when: { any: [{ left: '{{item}}', op: 'in', right: 3 }] } }] }, { id: 'nope', tool: 'missing' }] }],
    };
    const [cmp, other] = explain(plan);
    expect(cmp).toBe('In condition "c", case "x", comparison 1 (field cases[0].when.any[0].right): Step "c": operator "in" needs an array (or one reference to an array) on the right. Write the right side as a list, for example ["north", "south"].');
    expect(other).toContain('missing');
  });
});
