import type { AgentPlan } from '@fengyu/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { rebuildGraph } from './graph-rebuild';

/** Plans whose steps depend only on earlier steps (acyclic by construction). */
const plans = fc.integer({ min: 1, max: 20 }).chain((n) =>
  fc.tuple(...Array.from({ length: n }, (_, i) => fc.subarray(Array.from({ length: i }, (_, j) => `s${j}`)))).map(
    (deps): AgentPlan => ({ steps: deps.map((d, i) => ({ id: `s${i}`, tool: 'echo', arguments: { i }, ...(d.length ? { dependsOn: d } : {}) })) }),
  ),
);

type Node = { id: string; type: string; position: { x: number; y: number } };
type Edge = { id: string; source: string; target: string };

describe('rebuildGraph', () => {
  it('has a start node plus one node per step, and an edge per dependency (from start for roots)', () => {
    fc.assert(
      fc.property(plans, (plan) => {
        const g = rebuildGraph(plan, { type: 'object', properties: { a: { type: 'string' } } }) as { nodes: Node[]; edges: Edge[]; notes: unknown[] };
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
    const g = rebuildGraph({ steps: [{ id: 'a', instruction: 'think' }] }, { type: 'object', required: ['f'], properties: { f: { type: 'string', format: 'fengyu-file' }, e: { type: 'string', 'x-fengyu-enum': 'x_list' } } }, { a: { x: 5, y: 6 } }) as {
      nodes: Array<Node & { data: Record<string, unknown> }>;
    };
    expect(g.nodes[1]).toMatchObject({ id: 'a', type: 'model', position: { x: 5, y: 6 }, data: { instruction: 'think' } });
    expect(g.nodes[0]?.data.fields).toEqual([
      { name: 'f', type: 'file', required: true },
      { name: 'e', type: 'text', extra: { 'x-fengyu-enum': 'x_list' } },
    ]);
  });
});
