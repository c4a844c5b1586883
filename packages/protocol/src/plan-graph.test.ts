import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type AgentPlan, type OnError, type PlanStep, STEP_TIMEOUT_MS } from './plan';
import { fieldsToSchema } from './graph-fields';
import { cloneGraph, emptyGraph, FIELD_TYPES, newEdgeId, newNodeId, parseGraph, START_ID, type StartField, startNode } from './graph-model';
import { planToGraph } from './graph-layout';
import { graphToPlan } from './plan-graph';
import { type ToolInfo, validatePlan } from './validate';
import { checkGraph, diffGraphs, graphFingerprint, isEmptyDiff } from './graph-check';

/** Plans whose steps depend only on earlier steps (acyclic by construction). */
const plans = fc.integer({ min: 1, max: 20 }).chain((n) =>
  fc.tuple(...Array.from({ length: n }, (_, i) => fc.subarray(Array.from({ length: i }, (_, j) => `s${j}`)))).map(
    (deps): AgentPlan => ({ steps: deps.map((d, i) => ({ id: `s${i}`, tool: 'echo', arguments: { i }, ...(d.length ? { dependsOn: d } : {}) })) }),
  ),
);

describe('planToGraph (definitions saved without a graph, templates)', () => {
  it('has a start node plus one node per step, and an edge per dependency (from start for roots)', () => {
    fc.assert(
      fc.property(plans, (plan) => {
        const g = planToGraph(plan, { type: 'object', properties: { a: { type: 'string' } } });
        expect(g.nodes.map((n) => n.id)).toEqual(['start', ...plan.steps.map((s) => s.id)]);
        const expected = plan.steps.flatMap((s) => (s.dependsOn?.length ? s.dependsOn.map((d) => `${d}>${s.id}`) : [`start>${s.id}`]));
        expect(g.edges.map((e) => `${e.source}>${e.target}`).sort()).toEqual(expected.sort());
        expect(new Set(g.edges.map((e) => e.id)).size).toBe(g.edges.length);
        // a step sits right of each of its dependencies; no two nodes share a position
        const pos = new Map(g.nodes.map((n) => [n.id, n.position]));
        for (const s of plan.steps) for (const d of s.dependsOn ?? []) expect((pos.get(s.id)?.x ?? 0) > (pos.get(d)?.x ?? 0)).toBe(true);
        expect(new Set(g.nodes.map((n) => `${n.position.x},${n.position.y}`)).size).toBe(g.nodes.length);
      }),
    );
  });

  it('uses saved layout positions and keeps unmodelled schema keywords on start fields', () => {
    const g = planToGraph({ steps: [{ id: 'a', instruction: 'think' }] }, { type: 'object', required: ['f'], properties: { f: { type: 'string', format: 'fengyu-file' }, e: { type: 'string', 'x-fengyu-enum': 'x_list' } } }, { a: { x: 5, y: 6 } });
    expect(g.nodes[1]).toMatchObject({ id: 'a', type: 'model', position: { x: 5, y: 6 }, data: { instruction: 'think' } });
    expect(startNode(g)?.data.fields).toEqual([
      { name: 'f', type: 'file', required: true },
      { name: 'e', type: 'text', extra: { 'x-fengyu-enum': 'x_list' } },
    ]);
  });
});

// ── round trips ────────────────────────────────────────────────────────────────────────────

const TOOLS = ['echo', 'excel_analyze', 'email_send'];
const catalogTool = (name: string): ToolInfo | undefined =>
  TOOLS.includes(name) ? { name, inputSchema: { type: 'object' }, effect: 'read', idempotent: false, source: 'builtin', available: true } : undefined;
const isValid = (plan: AgentPlan): boolean => validatePlan(plan, { tool: catalogTool, inputNames: new Set() }).ok;

/** JSON data as it survives JSON (no -0, no undefined). */
const json = fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.parse(JSON.stringify(v)) as unknown);
const args = fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }).filter((k) => k !== '__proto__'), json, { maxKeys: 3 });
const optional = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });

/** One step in the shape the compiler emits, with `deps` (earlier ids) as its dependencies. */
function canonicalStep(id: string, earlier: string[]): fc.Arbitrary<PlanStep> {
  const common = fc.record({
    title: optional(fc.string({ minLength: 1, maxLength: 20 })),
    dependsOn: fc.shuffledSubarray(earlier),
    requiresApproval: optional(fc.constant(true as const)),
    retry: optional(fc.record({ maxAttempts: fc.integer({ min: 2, max: 5 }), initialBackoffMs: optional(fc.integer({ min: 0, max: 60_000 })) }, { requiredKeys: ['maxAttempts'] })),
    pinned: optional(json.map((result) => ({ result }))),
    onError: optional(fc.constantFrom<OnError>('fail', 'continue', 'branch')),
    timeoutMs: optional(fc.integer({ min: STEP_TIMEOUT_MS.min, max: STEP_TIMEOUT_MS.max })),
  });
  const kind = fc.oneof(
    fc.record({ tool: fc.constantFrom(...TOOLS), arguments: args }),
    fc.record({ instruction: fc.string({ minLength: 1, maxLength: 40 }).filter((s) => s.trim().length > 0), arguments: optional(args.filter((a) => Object.keys(a).length > 0)) }),
  );
  return fc.tuple(common, kind).map(([c, k]) => {
    const step: PlanStep = { id };
    if (c.title !== undefined) step.title = c.title;
    if ('tool' in k) step.tool = k.tool;
    else step.instruction = k.instruction;
    if (k.arguments !== undefined) step.arguments = k.arguments;
    if (c.dependsOn.length > 0) step.dependsOn = c.dependsOn;
    if (c.requiresApproval) step.requiresApproval = true;
    if (c.retry) step.retry = c.retry.initialBackoffMs === undefined ? { maxAttempts: c.retry.maxAttempts } : { maxAttempts: c.retry.maxAttempts, initialBackoffMs: c.retry.initialBackoffMs };
    if (c.pinned) step.pinned = c.pinned;
    if (c.onError) step.onError = c.onError;
    if (c.timeoutMs !== undefined) step.timeoutMs = c.timeoutMs;
    return step;
  });
}

const stepIds = fc.uniqueArray(fc.stringMatching(/^[A-Za-z][A-Za-z0-9_-]{0,11}$/).filter((id) => id !== START_ID), { minLength: 1, maxLength: 16 });

/** Valid plans in dependency order, in the canonical shape. */
const canonicalPlans: fc.Arbitrary<AgentPlan> = fc
  .tuple(stepIds, optional(fc.string({ minLength: 1, maxLength: 30 })))
  .chain(([ids, goal]) => fc.tuple(...ids.map((id, i) => canonicalStep(id, ids.slice(0, i)))).map((steps): AgentPlan => (goal ? { goal, steps } : { steps })));

const fields: fc.Arbitrary<StartField[]> = fc
  .uniqueArray(fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_-]{0,8}$/), { maxLength: 5 })
  .chain((names) =>
    fc.tuple(
      ...names.map((name) =>
        fc.record({
          name: fc.constant(name),
          type: fc.constantFrom(...FIELD_TYPES),
          label: optional(fc.string({ minLength: 1, maxLength: 10 })),
          required: optional(fc.constant(true as const)),
          options: optional(fc.array(fc.string({ maxLength: 5 }), { minLength: 1, maxLength: 3 })),
          extra: optional(fc.constantFrom<Record<string, unknown>>({ 'x-fengyu-enum': 'email_accounts_list' }, { 'x-fengyu-auto': 'shared-directory' }, { minLength: 2 })),
        }),
      ),
    ),
  );

describe('plan ⇄ graph round trip', () => {
  it('plan → graph → plan is the identity for valid plans in dependency order (input schema included)', () => {
    fc.assert(
      fc.property(canonicalPlans, fields, (plan, fs) => {
        fc.pre(isValid(plan));
        const inputSchema = fieldsToSchema(fs);
        const back = graphToPlan(planToGraph(plan, inputSchema), plan.goal);
        expect(back.plan).toEqual(plan);
        expect(back.inputSchema).toEqual(inputSchema);
      }),
    );
  });

  it('any valid plan is normalized once and is a fixed point from then on', () => {
    // Dependencies may name later steps here: the canvas reads them in dependency order.
    const anyOrder = canonicalPlans.chain((p) => fc.shuffledSubarray(p.steps, { minLength: p.steps.length }).map((steps): AgentPlan => ({ steps })));
    fc.assert(
      fc.property(anyOrder, (plan) => {
        fc.pre(isValid(plan));
        const once = graphToPlan(planToGraph(plan)).plan;
        expect(isValid(once)).toBe(true);
        expect(graphToPlan(planToGraph(once)).plan).toEqual(once);
        const deps = (p: AgentPlan) => Object.fromEntries(p.steps.map((s) => [s.id, [...(s.dependsOn ?? [])].sort()]));
        expect(deps(once)).toEqual(deps(plan));
      }),
    );
  });

  it('graph → plan → graph keeps every node and connection of a graph built from a plan', () => {
    fc.assert(
      fc.property(canonicalPlans, (plan) => {
        const graph = planToGraph(plan);
        const again = planToGraph(graphToPlan(graph, plan.goal).plan);
        expect(again).toEqual(graph);
      }),
    );
  });

  it('a saved layout wins, and steps without one are laid out right of their dependencies', () => {
    const plan: AgentPlan = { steps: [{ id: 'a', tool: 'echo', arguments: {} }, { id: 'b', tool: 'echo', arguments: {}, dependsOn: ['a'] }, { id: 'c', tool: 'echo', arguments: {} }] };
    const g = planToGraph(plan, undefined, { start: { x: 1, y: 2 }, a: { x: 10, y: 20 } });
    expect(g.nodes.map((n) => [n.id, n.position])).toEqual([
      ['start', { x: 1, y: 2 }],
      ['a', { x: 10, y: 20 }],
      ['b', { x: 80 + 2 * 300, y: 200 }],
      ['c', { x: 80 + 2 * 300, y: 360 }],
    ]);
    // c, a root step listed after b, stays after b: `{{steps.3}}` keeps meaning c.
    expect(graphToPlan(planToGraph(plan)).plan).toEqual(plan);
  });
});

describe('graph documents (stored graphs are untrusted)', () => {
  it('parseGraph keeps what it can and fills defaults', () => {
    const g = parseGraph({ nodes: [{ id: 'a', type: 'tool', tool: { name: 't' } }, { id: 'x', type: 'weird' }], edges: [{ id: 'e', source: 'a', target: 'gone' }, 7] });
    expect(g).toEqual({ version: 1, nodes: [{ id: 'a', type: 'tool', tool: { name: 't' }, position: { x: 0, y: 0 }, data: { arguments: {} } }], edges: [{ id: 'e', source: 'a', target: 'gone' }], notes: [] });
    expect(parseGraph('nope')).toBeUndefined();
  });

  it('fresh ids are valid step ids and unused', () => {
    const g = emptyGraph();
    expect(newNodeId(g, '9 start')).toBe('start_2');
    expect(newNodeId(g, '中文')).toBe('step');
    expect(newEdgeId(g, 'a', 'b')).toBe('e_a_b');
  });
});

describe('graph diffs and fingerprints', () => {
  it('names added, changed and removed nodes and connections; ignores layout', () => {
    const before = planToGraph({ steps: [{ id: 'a', tool: 'echo', arguments: {} }, { id: 'b', tool: 'echo', arguments: {}, dependsOn: ['a'] }] });
    const after = planToGraph({ steps: [{ id: 'a', tool: 'echo', arguments: { x: 1 } }, { id: 'c', tool: 'echo', arguments: {} }] });
    expect(diffGraphs(before, after)).toEqual({
      nodes: { added: ['c'], changed: ['a'], removed: ['b'] },
      edges: { added: [{ source: 'start', target: 'c' }], removed: [{ source: 'a', target: 'b' }] },
    });
    const moved = cloneGraph(before);
    (moved.nodes[1] as { position: { x: number } }).position.x += 10;
    expect(isEmptyDiff(diffGraphs(before, moved))).toBe(true);
    expect(graphFingerprint(moved)).not.toBe(graphFingerprint(before));
    expect(graphFingerprint(cloneGraph(before))).toBe(graphFingerprint(before));
  });

  it('checkGraph reports dangling connections and the validator\'s problems at once', () => {
    const g = planToGraph({ steps: [{ id: 'a', tool: 'nope', arguments: { q: '{{node.ghost.result}}' } }] });
    g.edges.push({ id: 'x', source: 'a', target: 'gone' });
    const codes = checkGraph(g, { tool: catalogTool }).map((d) => d.code);
    expect(codes).toEqual(expect.arrayContaining(['edge_dangling', 'step_unknown_tool', 'ref_unknown_step']));
    expect(checkGraph(emptyGraph(), { tool: catalogTool })).toEqual([]);
  });
});
