import { emptyGraph, type WorkflowGraph } from '@fengyu/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CARD, placeNewNode } from './placement';

const withNodes = (positions: Array<{ x: number; y: number }>): WorkflowGraph => {
  const g = emptyGraph();
  positions.forEach((position, i) => g.nodes.push({ id: `n${i}`, type: 'model', position, data: { arguments: {}, instruction: '' } } as WorkflowGraph['nodes'][number]));
  return g;
};
const clear = (g: WorkflowGraph, p: { x: number; y: number }) => g.nodes.every((n) => Math.abs(n.position.x - p.x) >= CARD.width || Math.abs(n.position.y - p.y) >= CARD.height);

describe('placing a new node', () => {
  it('keeps a drop where it was dropped when that spot is free', () => {
    expect(placeNewNode(emptyGraph(), { dropped: { x: 500, y: 420 }, fallback: { x: 0, y: 0 } })).toEqual({ x: 500, y: 420 });
  });

  it('never stacks on the Start node', () => {
    const g = emptyGraph();
    const start = g.nodes[0]?.position ?? { x: 0, y: 0 };
    const at = placeNewNode(g, { fallback: start });
    expect(clear(g, at)).toBe(true);
  });

  it('goes to the right of the selected node', () => {
    const g = withNodes([{ x: 100, y: 100 }]);
    const at = placeNewNode(g, { selectedId: 'n0', fallback: { x: 0, y: 0 } });
    expect(at.x).toBeGreaterThan(100 + CARD.width - 1);
    expect(at.y).toBe(100);
  });

  it('property: the chosen spot never overlaps an existing node', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ x: fc.integer({ min: 0, max: 2000 }), y: fc.integer({ min: 0, max: 2000 }) }), { maxLength: 30 }), fc.record({ x: fc.integer({ min: 0, max: 2000 }), y: fc.integer({ min: 0, max: 2000 }) }), (positions, drop) => {
        const g = withNodes(positions);
        expect(clear(g, placeNewNode(g, { dropped: drop, fallback: drop }))).toBe(true);
      }),
    );
  });
});
