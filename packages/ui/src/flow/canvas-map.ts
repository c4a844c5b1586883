import { BODY_HANDLE, type GraphEdge, type GraphPosition, newEdgeId, parentOf, portOfHandle, type WorkflowGraph } from '@fengyu/protocol';
import type { Connection, Edge, Node } from '@vue-flow/core';
import { groupSize, levelOf } from './groups';

/**
 * The ONE mapping between FengYu's saved graph and vue-flow's canvas model. vue-flow nodes carry
 * only `{ nodeId }`; their components read the document from the builder store. Nothing in
 * vue-flow's format is ever persisted.
 */

export const CANVAS_TYPES = { start: 'fy-start', step: 'fy-step', group: 'fy-group', note: 'fy-note', edge: 'fy-edge' } as const;

export interface CanvasNodeData {
  nodeId: string;
}

/**
 * Canvas nodes: forEach groups first (vue-flow draws a parent before its children, whose
 * positions are relative to it), sized and behind the nodes of their body.
 */
export function toCanvasNodes(graph: WorkflowGraph): Node<CanvasNodeData>[] {
  const ordered = [...graph.nodes.filter((n) => n.type === 'forEach'), ...graph.nodes.filter((n) => n.type !== 'forEach')];
  const nodes: Node<CanvasNodeData>[] = ordered.map((n) => {
    const parent = parentOf(n);
    if (n.type === 'forEach') {
      const { width, height } = groupSize(n);
      return { id: n.id, type: CANVAS_TYPES.group, position: { ...n.position }, data: { nodeId: n.id }, style: { width: `${width}px`, height: `${height}px` }, zIndex: -1 };
    }
    return {
      id: n.id,
      type: n.type === 'start' ? CANVAS_TYPES.start : CANVAS_TYPES.step,
      position: { ...n.position },
      data: { nodeId: n.id },
      deletable: n.type !== 'start',
      ...(parent ? { parentNode: parent } : {}),
    };
  });
  for (const note of graph.notes) {
    nodes.push({
      id: note.id,
      type: CANVAS_TYPES.note,
      position: { ...note.position },
      data: { nodeId: note.id },
      zIndex: -1,
    });
  }
  return nodes;
}

export function toCanvasEdges(graph: WorkflowGraph): Edge[] {
  return graph.edges.map((e) => ({
    id: e.id,
    source: e.source,
    target: e.target,
    sourceHandle: e.sourceHandle ?? 'out',
    targetHandle: 'in',
    type: CANVAS_TYPES.edge,
  }));
}

/** Applies finished drags to the document; returns whether anything moved. */
export function applyPositions(graph: WorkflowGraph, moved: ReadonlyArray<{ id: string; position: GraphPosition }>): boolean {
  let changed = false;
  for (const m of moved) {
    const target = graph.nodes.find((n) => n.id === m.id) ?? graph.notes.find((n) => n.id === m.id);
    if (!target) continue;
    const x = Math.round(m.position.x);
    const y = Math.round(m.position.y);
    if (target.position.x !== x || target.position.y !== y) {
      target.position = { x, y };
      changed = true;
    }
  }
  return changed;
}

/**
 * A canvas connection as a document edge, or undefined when it is not allowed: to Start, to
 * itself, a second one between the same handles, or across a group's border (only a group's
 * inner start leads into its body).
 */
export function connectionToEdge(graph: WorkflowGraph, c: Connection): GraphEdge | undefined {
  if (!c.source || !c.target || c.source === c.target) return undefined;
  const target = graph.nodes.find((n) => n.id === c.target);
  const source = graph.nodes.find((n) => n.id === c.source);
  if (!source || !target || target.type === 'start') return undefined;
  // two connections between the same nodes only from different ports (check:big and check:else)
  const handle = (h: string | null | undefined) => portOfHandle(h ?? undefined);
  if (graph.edges.some((e) => e.source === c.source && e.target === c.target && handle(e.sourceHandle) === handle(c.sourceHandle))) return undefined;
  const fromLevel = c.sourceHandle === BODY_HANDLE ? c.source : levelOf(graph, c.source);
  if (fromLevel !== levelOf(graph, c.target)) return undefined;
  const sourceHandle = c.sourceHandle && c.sourceHandle !== 'out' ? c.sourceHandle : undefined;
  return { id: newEdgeId(graph, c.source, c.target), source: c.source, target: c.target, ...(sourceHandle ? { sourceHandle } : {}) };
}
