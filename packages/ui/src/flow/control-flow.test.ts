import { emptyGraph, graphToPlan, planToGraph, type WorkflowGraph } from '@fengyu/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { connectionToEdge } from './canvas-map';
import { newCase, parseOperand, showOperand, withOp } from './conditions';
import { addConditionNode, addForEachNode, removeElements } from './graph-edits';
import { groupAt, placeInGroup } from './groups';
import { flattenRows, variableTree } from './variables';

/** The canvas side of control flow: operands, groups (drag in and out), connections across a group's border, the loop's variables. */

describe('condition operands', () => {
  it('reads literals as JSON and everything else as text, and shows each back as typed', () => {
    expect(parseOperand('1000')).toBe(1000);
    expect(parseOperand('true')).toBe(true);
    expect(parseOperand('["a","b"]')).toEqual(['a', 'b']);
    expect(parseOperand('"1000"')).toBe('1000');
    expect(parseOperand('{{node.sum.result.total}}')).toBe('{{node.sum.result.total}}');
    expect(parseOperand('Hello {{inputs.name}}')).toBe('Hello {{inputs.name}}');
    expect(parseOperand('big')).toBe('big');
    // whatever the value, showing it and reading it back gives it again
    fc.assert(fc.property(fc.jsonValue({ maxDepth: 2 }), (v) => {
      expect(parseOperand(showOperand(v))).toEqual(JSON.parse(JSON.stringify(v)));
    }));
  });

  it('drops right for exists/empty, gives it back for a binary operator, and names new cases freshly', () => {
    expect(withOp({ left: 'a', op: 'eq', right: 3 }, 'empty')).toEqual({ left: 'a', op: 'empty' });
    expect(withOp({ left: 'a', op: 'empty' }, 'gt')).toEqual({ left: 'a', op: 'gt', right: '' });
    expect(newCase([{ name: 'case_2', description: '' }], true)).toEqual({ name: 'case_3', description: '' });
  });
});

function flow(): WorkflowGraph {
  return planToGraph({
    steps: [
      { id: 'split', tool: 'echo', arguments: { value: [{ email: 'a@x' }] } },
      { id: 'each', kind: 'forEach', items: '{{node.split.result}}', dependsOn: ['split'], steps: [{ id: 'mail', tool: 'echo', arguments: { to: '{{item.email}}' } }] },
      { id: 'report', tool: 'echo', arguments: {}, dependsOn: ['each'] },
    ],
  });
}

describe('forEach groups on the canvas', () => {
  it('a node dropped into a group becomes a body step (edges across the border dropped, the inner start connected); dragged out, an outer step again', () => {
    const g = flow();
    const each = g.nodes.find((n) => n.id === 'each');
    if (each?.type !== 'forEach') throw new Error('no group');
    const inside = { x: each.position.x + 420, y: each.position.y + 80 };
    expect(groupAt(g, inside)?.id).toBe('each');
    expect(placeInGroup(g, 'report', inside, 'each')).toBe(true);
    expect(g.edges.some((e) => e.target === 'report' && e.source === 'each' && e.sourceHandle === 'body')).toBe(true);
    expect(g.edges.some((e) => e.target === 'report' && !e.sourceHandle)).toBe(false);
    expect(graphToPlan(g).plan.steps.map((s) => [s.id, (s.steps ?? []).map((b) => b.id)])).toEqual([
      ['split', []],
      ['each', ['mail', 'report']],
    ]);
    // out again: the inner-start edge goes, the position is the canvas position
    expect(placeInGroup(g, 'report', { x: 2000, y: 200 }, undefined)).toBe(true);
    expect(g.nodes.find((n) => n.id === 'report')?.position).toEqual({ x: 2000, y: 200 });
    expect(g.edges.some((e) => e.target === 'report')).toBe(false);
    expect(graphToPlan(g).plan.steps.map((s) => s.id)).toEqual(['split', 'each', 'report']);
  });

  it('refuses connections across a group border, allows the inner start into its own body', () => {
    const g = flow();
    expect(connectionToEdge(g, { source: 'split', target: 'mail', sourceHandle: 'out', targetHandle: 'in' })).toBeUndefined();
    expect(connectionToEdge(g, { source: 'mail', target: 'report', sourceHandle: 'out', targetHandle: 'in' })).toBeUndefined();
    const id = addConditionNode(g, { x: 0, y: 0 }, false);
    expect(connectionToEdge(g, { source: id, target: 'report', sourceHandle: 'port:yes', targetHandle: 'in' })).toMatchObject({ sourceHandle: 'port:yes' });
    g.edges = g.edges.filter((e) => e.source !== 'each' || e.target !== 'mail');
    expect(connectionToEdge(g, { source: 'each', target: 'mail', sourceHandle: 'body', targetHandle: 'in' })).toMatchObject({ sourceHandle: 'body' });
  });

  it('deleting a group deletes its body; a new group is empty and its compiled body reports the empty body', () => {
    const g = flow();
    removeElements(g, new Set(['each']), new Set());
    expect(g.nodes.map((n) => n.id)).toEqual(['start', 'split', 'report']);
    const e = emptyGraph();
    addForEachNode(e, { x: 0, y: 0 });
    expect(graphToPlan(e).plan.steps).toEqual([{ id: 'each', kind: 'forEach', items: '', steps: [] }]);
  });

  it('offers item and index inside the body only, body steps only to each other, and the loop (not its body) outside', () => {
    const g = flow();
    const ctx = { graph: g, tool: () => undefined, lastResults: new Map<string, unknown>([['split', [{ email: 'a@x', rows: 1200 }]]]) };
    const inner = variableTree(ctx, 'mail', 'any');
    const loop = inner.find((x) => x.id === 'loop');
    expect(flattenRows(loop?.rows ?? []).map((r) => r.ref)).toEqual(['{{item}}', '{{item.email}}', '{{item.rows}}', '{{index}}']);
    expect(inner.find((x) => x.nodeId === 'split')?.connected).toBe(true);
    expect(inner.some((x) => x.nodeId === 'report')).toBe(false);
    const outer = variableTree(ctx, 'report', 'any');
    expect(outer.some((x) => x.id === 'loop')).toBe(false);
    expect(outer.some((x) => x.nodeId === 'mail')).toBe(false);
    expect(outer.some((x) => x.nodeId === 'each')).toBe(true);
  });
});
