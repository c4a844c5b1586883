import type { GraphPosition, WorkflowGraph } from '@fengyu/protocol';

/**
 * Where a new node goes: where it was dropped, else to the right of the selected node, else at
 * the given fallback (the canvas centre) — and never on top of another node or note: an occupied
 * spot moves down one card at a time until it is free.
 */

export const CARD = { width: 260, height: 110 } as const;
const GAP = 40;

function overlaps(a: GraphPosition, b: GraphPosition): boolean {
  return Math.abs(a.x - b.x) < CARD.width && Math.abs(a.y - b.y) < CARD.height;
}

export function freeSpot(graph: WorkflowGraph, desired: GraphPosition): GraphPosition {
  const taken = [...graph.nodes.map((n) => n.position), ...graph.notes.map((n) => n.position)];
  let spot = { x: Math.round(desired.x), y: Math.round(desired.y) };
  for (let i = 0; i < 200 && taken.some((p) => overlaps(p, spot)); i++) spot = { x: spot.x, y: spot.y + CARD.height };
  return spot;
}

export function placeNewNode(graph: WorkflowGraph, opts: { dropped?: GraphPosition; selectedId?: string; fallback: GraphPosition }): GraphPosition {
  if (opts.dropped) return freeSpot(graph, opts.dropped);
  const selected = opts.selectedId ? [...graph.nodes, ...graph.notes].find((n) => n.id === opts.selectedId) : undefined;
  if (selected) return freeSpot(graph, { x: selected.position.x + CARD.width + GAP, y: selected.position.y });
  return freeSpot(graph, opts.fallback);
}
