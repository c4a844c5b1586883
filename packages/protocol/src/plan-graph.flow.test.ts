import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { COMPARISON_OPS, type ConditionCase, UNARY_OPS } from './control-flow';
import { planToGraph } from './graph-layout';
import { absolutePosition, BODY_HANDLE, GROUP_SIZE, parseGraph, type WorkflowGraph } from './graph-model';
import type { AgentPlan, PlanStep } from './plan';
import { checkGraph } from './graph-check';
import { graphDependencies, graphToPlan } from './plan-graph';
import type { ToolInfo } from './validate';

/**
 * Control flow survives plan → graph → plan: conditions (structured and model), ports in
 * `dependsOn`, `join: "any"`, and forEach groups with their bodies.
 */

const CASES = ['big', 'small', 'empty', 'other'];
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const literal = fc.oneof(fc.integer({ min: -5, max: 2000 }), fc.string({ maxLength: 6 }), fc.boolean(), fc.constant(null));

/** A comparison reading an earlier step (or a literal), with `right` exactly when the operator takes one. */
function comparison(refs: string[]): fc.Arbitrary<ConditionCase['when']> {
  const side = refs.length > 0 ? fc.oneof(literal, fc.constantFrom(...refs).map((r) => `{{node.${r}.result}}`)) : literal;
  const cmp = fc.record({ left: side, op: fc.constantFrom(...COMPARISON_OPS), right: side }).map((c) => (UNARY_OPS.includes(c.op as never) ? { left: c.left, op: c.op } : c));
  return fc.tuple(fc.boolean(), fc.array(cmp, { minLength: 1, maxLength: 2 })).map(([all, list]) => (all ? { all: list } : { any: list }));
}

/** A condition step's own fields: structured cases, or a model condition with descriptions. */
function conditionFields(refs: string[]): fc.Arbitrary<Partial<PlanStep>> {
  const names = fc.shuffledSubarray(CASES, { minLength: 1, maxLength: 3 });
  const structured = names.chain((ns) => fc.tuple(...ns.map((name) => comparison(refs).map((when): ConditionCase => ({ name, when })))));
  const model = fc.tuple(names, fc.string({ minLength: 1, maxLength: 20 })).map(([ns, instruction]) => ({ instruction, cases: ns.map((name) => ({ name, description: `when ${name}` })) }));
  return fc.oneof(structured.map((cases) => ({ kind: 'condition' as const, cases })), model.map((m) => ({ kind: 'condition' as const, ...m })));
}

/** The ports of the earlier steps that a dependency may name. */
type Earlier = Array<{ id: string; ports: string[] }>;
/** A dependency on an earlier step: plain, or on one of its ports. */
const dependency = (e: Earlier[number]) => (e.ports.length ? fc.constantFrom(e.id, ...e.ports.map((p) => `${e.id}:${p}`)) : fc.constant(e.id));

/** Steps of one level in canonical shape; `body` false lets forEach groups appear (with bodies of their own). */
function level(prefix: string, count: number, body: boolean): fc.Arbitrary<PlanStep[]> {
  const build = (i: number, earlier: Earlier): fc.Arbitrary<PlanStep[]> => {
    if (i >= count) return fc.constant([]);
    const id = `${prefix}${i}`;
    const deps = fc.shuffledSubarray(earlier).chain((picked) => (picked.length ? fc.tuple(...picked.map(dependency)) : fc.constant([] as string[])));
    const kinds: Array<fc.Arbitrary<Partial<PlanStep>>> = [
      fc.record({ tool: fc.constantFrom('echo', 'email_send'), arguments: fc.dictionary(fc.constantFrom('a', 'b'), literal, { maxKeys: 2 }) }),
      fc.string({ minLength: 1, maxLength: 12 }).map((instruction) => ({ instruction })),
      conditionFields(earlier.map((e) => e.id)),
    ];
    if (!body) {
      const items = fc.oneof(fc.array(literal, { maxLength: 3 }), fc.constant('{{inputs.rows}}'));
      const loop = fc.record({ items, concurrency: optional(fc.integer({ min: 1, max: 8 })), maxItems: optional(fc.integer({ min: 1, max: 10_000 })) }, { requiredKeys: ['items'] });
      kinds.push(fc.tuple(loop, fc.integer({ min: 1, max: 4 }).chain((n) => level(`${id}_b`, n, true))).map(([l, steps]) => ({ kind: 'forEach' as const, ...l, steps })));
      // a Human Input node (never in a body: the validator refuses it there)
      const form = { type: 'object', properties: { discount: { type: 'number' }, note: { type: 'string', maxLength: 20 } }, required: ['discount'] };
      kinds.push(
        fc.record({ onTimeout: optional(fc.constantFrom('fail' as const, 'default' as const)), defaults: optional(fc.constant({ discount: 5 })) }).map((i) => ({
          kind: 'input' as const,
          form,
          ...(i.onTimeout ? { onTimeout: i.onTimeout } : {}),
          ...(i.defaults ? { defaults: i.defaults } : {}),
        })),
      );
    }
    const common = fc.record({
      title: optional(fc.string({ minLength: 1, maxLength: 10 })),
      join: optional(fc.constant('any' as const)),
      requiresApproval: optional(fc.constant(true as const)),
      // fields the canvas does not model (onError, timeoutMs) travel through it untouched
      timeoutMs: optional(fc.integer({ min: 1000, max: 3_600_000 })),
      onError: optional(fc.constantFrom('continue' as const, 'branch' as const)),
    });
    return fc.tuple(fc.oneof(...kinds), deps, common).chain(([fields, dependsOn, c]) => {
      const step: PlanStep = { id, ...(c.title ? { title: c.title } : {}), ...fields };
      if (step.concurrency === undefined) delete step.concurrency;
      if (step.maxItems === undefined) delete step.maxItems;
      if (dependsOn.length) step.dependsOn = dependsOn;
      if (c.join) step.join = 'any';
      if (c.requiresApproval) step.requiresApproval = true;
      if (c.timeoutMs !== undefined) step.timeoutMs = c.timeoutMs;
      if (c.onError !== undefined) step.onError = c.onError;
      const ports = step.kind === 'condition' ? [...(step.cases ?? []).map((x) => x.name), 'else'] : [];
      return build(i + 1, [...earlier, { id, ports }]).map((rest) => [step, ...rest]);
    });
  };
  return build(0, []);
}

const plans = fc.integer({ min: 1, max: 8 }).chain((n) => level('s', n, false)).map((steps): AgentPlan => ({ steps }));

describe('control flow on the canvas: plan → graph → plan', () => {
  it('keeps conditions, ports, joins, forEach bodies and Human Input forms exactly', () => {
    const seen = { forEach: 0, port: 0, join: 0, modelCondition: 0, input: 0 };
    fc.assert(
      fc.property(plans, (plan) => {
        const all = plan.steps.flatMap((s) => [s, ...(s.steps ?? [])]);
        if (all.some((s) => s.kind === 'forEach')) seen.forEach++;
        if (all.some((s) => s.dependsOn?.some((d) => d.includes(':')))) seen.port++;
        if (all.some((s) => s.join)) seen.join++;
        if (all.some((s) => s.kind === 'input')) seen.input++;
        if (all.some((s) => s.kind === 'condition' && s.instruction !== undefined)) seen.modelCondition++;
        const graph = planToGraph(plan);
        expect(graphToPlan(graph).plan).toEqual(plan);
        // and a stored copy reads back the same
        expect(graphToPlan(parseGraph(JSON.parse(JSON.stringify(graph))) as WorkflowGraph).plan).toEqual(plan);
      }),
      { numRuns: 150 },
    );
    // the generator really draws every construct
    for (const [what, n] of Object.entries(seen)) expect(n, what).toBeGreaterThan(10);
  });

  it('draws a port dependency from the port handle, a body inside its group and its roots from the inner start', () => {
    fc.assert(
      fc.property(plans, (plan) => {
        const graph = planToGraph(plan);
        const byId = new Map(graph.nodes.map((n) => [n.id, n]));
        for (const step of plan.steps) {
          for (const d of step.dependsOn ?? []) {
            const [source, port] = d.split(':');
            expect(graph.edges.some((e) => e.source === source && e.target === step.id && e.sourceHandle === (port ? `port:${port}` : undefined))).toBe(true);
          }
          if (step.kind !== 'forEach') continue;
          const group = byId.get(step.id);
          if (group?.type !== 'forEach') throw new Error('not a group');
          const size = { width: group.data.width ?? GROUP_SIZE.width, height: group.data.height ?? GROUP_SIZE.height };
          for (const inner of step.steps ?? []) {
            const node = byId.get(inner.id);
            expect(node && node.type !== 'start' && node.type !== 'forEach' && node.parentId).toBe(step.id);
            // inside the group's box
            const abs = absolutePosition(graph, node as NonNullable<typeof node>);
            expect(abs.x).toBeGreaterThan(group.position.x);
            expect(abs.x + 200).toBeLessThanOrEqual(group.position.x + size.width);
            expect(abs.y + 60).toBeLessThanOrEqual(group.position.y + size.height);
            const fromStart = graph.edges.some((e) => e.source === step.id && e.target === inner.id && e.sourceHandle === BODY_HANDLE);
            expect(fromStart).toBe(!inner.dependsOn?.length);
          }
        }
        // no two top-level nodes overlap a group's box
        const groups = graph.nodes.filter((n) => n.type === 'forEach');
        for (const g of groups) {
          if (g.type !== 'forEach') continue;
          for (const n of graph.nodes) {
            if (n.id === g.id || (n.type !== 'start' && n.type !== 'forEach' && n.parentId)) continue;
            const inside = n.position.x + 200 > g.position.x && n.position.x < g.position.x + (g.data.width ?? 0) && n.position.y + 60 > g.position.y && n.position.y < g.position.y + (g.data.height ?? 0);
            expect(inside, `${n.id} overlaps ${g.id}`).toBe(false);
          }
        }
      }),
      { numRuns: 100 },
    );
  });

  it('compiles a dragged-in node into the body and ignores edges from the inner start', () => {
    const graph = planToGraph({ steps: [{ id: 'each', kind: 'forEach', items: [1, 2], steps: [{ id: 'mail', tool: 'echo', arguments: {} }] }, { id: 'after', tool: 'echo', arguments: {}, dependsOn: ['each'] }] });
    const after = graph.nodes.find((n) => n.id === 'after');
    if (after?.type !== 'tool') throw new Error('no node');
    after.parentId = 'each';
    after.position = { x: 420, y: 60 };
    graph.edges = graph.edges.filter((e) => e.target !== 'after');
    graph.edges.push({ id: 'x', source: 'mail', target: 'after' });
    const { plan } = graphToPlan(graph);
    expect(plan.steps).toEqual([{ id: 'each', kind: 'forEach', items: [1, 2], steps: [{ id: 'mail', tool: 'echo', arguments: {} }, { id: 'after', tool: 'echo', arguments: {}, dependsOn: ['mail'] }] }]);
    expect(graphDependencies(graph).get('mail')).toEqual([]);
  });

  it('reads a stored graph whose body node lost its group as a top-level node', () => {
    const g = parseGraph({ nodes: [{ id: 'a', type: 'tool', tool: { name: 'echo' }, parentId: 'gone', position: { x: 1, y: 2 }, data: {} }, { id: 'c', type: 'condition', position: { x: 0, y: 0 } }], edges: [] });
    expect(g?.nodes[0]).toMatchObject({ id: 'a', position: { x: 1, y: 2 } });
    expect(g?.nodes[0]).not.toHaveProperty('parentId');
    expect(g?.nodes[1]).toMatchObject({ id: 'c', type: 'condition', data: { cases: [], arguments: {} } });
  });

  it('shows §8 validation problems on the node they concern: a body step, a comparison, a port', () => {
    const echo: ToolInfo = { name: 'echo', inputSchema: { type: 'object' }, effect: 'read', idempotent: false, source: 'builtin', available: true };
    const tool = (name: string) => (name === 'echo' ? echo : undefined);
    const graph = planToGraph({
      steps: [
        { id: 'sum', tool: 'echo', arguments: { value: 5 } },
        { id: 'check', kind: 'condition', dependsOn: ['sum'], cases: [{ name: 'big', when: { all: [{ left: '{{node.sum.result}}', op: 'bigger', right: 1 }] } }] },
        { id: 'each', kind: 'forEach', items: [1, 2], dependsOn: ['check:big'], steps: [{ id: 'mail', tool: 'nope', arguments: { to: '{{item}}' } }] },
        { id: 'after', tool: 'echo', arguments: {}, dependsOn: ['check:small'] },
      ],
    });
    const found = checkGraph(graph, { tool }).map((d) => `${d.nodeId}:${d.code}:${d.field ?? ''}`);
    expect(found).toContain('check:condition_operator_unknown:cases[0].when.all[0].op');
    expect(found.some((f) => f.startsWith('mail:step_unknown_tool'))).toBe(true);
    expect(found.some((f) => f.startsWith('after:step_unknown_dependency'))).toBe(true);
    // fixed, the same graph is sound
    const fixed = planToGraph({
      steps: [
        { id: 'sum', tool: 'echo', arguments: { value: 5 } },
        { id: 'check', kind: 'condition', dependsOn: ['sum'], cases: [{ name: 'big', when: { all: [{ left: '{{node.sum.result}}', op: 'gt', right: 1 }] } }] },
        { id: 'each', kind: 'forEach', items: [1, 2], dependsOn: ['check:big'], steps: [{ id: 'mail', tool: 'echo', arguments: { to: '{{item}}' } }] },
        { id: 'after', tool: 'echo', arguments: {}, dependsOn: ['check:else', 'each'], join: 'any' },
      ],
    });
    expect(checkGraph(fixed, { tool })).toEqual([]);
  });
});
