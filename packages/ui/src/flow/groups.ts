import { absolutePosition, BODY_HANDLE, type ForEachNode, GROUP_SIZE, type GraphPosition, newEdgeId, parentOf, type WorkflowGraph } from '@fengyu/protocol';

/**
 * forEach groups on the canvas: which group a point falls in, and moving a node into or out of a
 * body. A node inside a group is a body step (`parentId`, position relative to the group); a
 * connection never crosses a group's border (a body step depends on body steps only),
 * so moving a node across it drops such connections. Plain mutations; the store wraps each in an
 * undo snapshot.
 */

/** A group's size on the canvas. */
export function groupSize(g: ForEachNode): { width: number; height: number } {
  return { width: g.data.width ?? GROUP_SIZE.width, height: g.data.height ?? GROUP_SIZE.height };
}

/** The group whose box holds the point (absolute canvas coordinates), the last drawn first; undefined outside every group. */
export function groupAt(graph: WorkflowGraph, point: GraphPosition): ForEachNode | undefined {
  const groups = graph.nodes.filter((n): n is ForEachNode => n.type === 'forEach');
  for (let i = groups.length - 1; i >= 0; i--) {
    const g = groups[i] as ForEachNode;
    const { width, height } = groupSize(g);
    if (point.x >= g.position.x && point.x <= g.position.x + width && point.y >= g.position.y && point.y <= g.position.y + height) return g;
  }
  return undefined;
}

/** The level a node sits on: its group's id, or undefined at the top level. */
export function levelOf(graph: WorkflowGraph, id: string): string | undefined {
  const n = graph.nodes.find((x) => x.id === id);
  return n ? parentOf(n) : undefined;
}

/**
 * Puts node `id` at absolute position `at` and into the group `groupId` (or the top level when
 * undefined): the position becomes relative to the new group, connections that would cross its
 * border are dropped, and a node entering a body with no connection from inside it is connected
 * from the group's inner start. Start and groups never move into a group. Returns whether the
 * node changed level.
 */
export function placeInGroup(graph: WorkflowGraph, id: string, at: GraphPosition, groupId: string | undefined): boolean {
  const node = graph.nodes.find((n) => n.id === id);
  if (!node || node.type === 'start' || node.type === 'forEach') return false;
  const group = groupId ? graph.nodes.find((n): n is ForEachNode => n.id === groupId && n.type === 'forEach') : undefined;
  const before = node.parentId;
  if (group) node.parentId = group.id;
  else delete node.parentId;
  const base = group ? group.position : { x: 0, y: 0 };
  node.position = { x: Math.round(at.x - base.x), y: Math.round(at.y - base.y) };
  if (before === node.parentId) return false;
  graph.edges = graph.edges.filter((e) => {
    if (e.source !== id && e.target !== id) return true;
    if (e.sourceHandle === BODY_HANDLE) return e.source === node.parentId && e.target === id;
    return levelOf(graph, e.source) === levelOf(graph, e.target);
  });
  if (group && !graph.edges.some((e) => e.target === id)) graph.edges.push({ id: newEdgeId(graph, group.id, id), source: group.id, target: id, sourceHandle: BODY_HANDLE });
  return true;
}

/** Where a node is on the canvas, whatever its level (for hit tests and placement). */
export function canvasPosition(graph: WorkflowGraph, id: string): GraphPosition | undefined {
  const n = graph.nodes.find((x) => x.id === id);
  return n ? absolutePosition(graph, n) : undefined;
}
