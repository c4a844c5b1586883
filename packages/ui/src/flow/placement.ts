import { absolutePosition, type GraphPosition, type WorkflowGraph } from '@fengyu/protocol';

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
  // canvas positions (a body node's is its group's plus its own); a group is an area, not a card
  const taken = [...graph.nodes.filter((n) => n.type !== 'forEach').map((n) => absolutePosition(graph, n)), ...graph.notes.map((n) => n.position)];
  let spot = { x: Math.round(desired.x), y: Math.round(desired.y) };
  for (let i = 0; i < 200 && taken.some((p) => overlaps(p, spot)); i++) spot = { x: spot.x, y: spot.y + CARD.height };
  return spot;
}

export function placeNewNode(graph: WorkflowGraph, opts: { dropped?: GraphPosition; selectedId?: string; fallback: GraphPosition }): GraphPosition {
  if (opts.dropped) return freeSpot(graph, opts.dropped);
  const node = opts.selectedId ? graph.nodes.find((n) => n.id === opts.selectedId && n.type !== 'forEach') : undefined;
  const selected = node ? absolutePosition(graph, node) : graph.notes.find((n) => n.id === opts.selectedId)?.position;
  if (selected) return freeSpot(graph, { x: selected.x + CARD.width + GAP, y: selected.y });
  return freeSpot(graph, opts.fallback);
}
