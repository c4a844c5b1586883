import { absolutePosition, type CatalogEntry, graphFingerprint, jsonCopy, parseGraph, type Proposal, type WorkflowGraph } from '@fengyu/protocol';

export type { Proposal };
import { syncWithCatalog } from '../../flow/catalog-nodes';

/**
 * The AI panel's pure parts: what a proposal looks like on the canvas (the proposed graph plus
 * the removed nodes and connections, each marked), whether a proposal is stale, and the graph an
 * applied proposal puts on the canvas (rehydrated through the live tool catalog).
 */

export type DiffMark = 'added' | 'changed' | 'removed';

/** What the canvas shows while a proposal is open. */
export interface DiffView {
  graph: WorkflowGraph;
  nodes: Record<string, DiffMark>;
  edges: Record<string, DiffMark>;
}

/** The fingerprint of the canvas as the host computes it for a snapshot. */
export function canvasFingerprint(graph: WorkflowGraph): string {
  const parsed = parseGraph(jsonCopy(graph));
  return parsed ? graphFingerprint(parsed) : '';
}

const key = (e: { source: string; target: string }) => `${e.source}>${e.target}`;

/** The proposed graph plus what it removes (kept in place, marked `removed`). */
export function diffView(current: WorkflowGraph, p: Proposal): DiffView {
  const graph = jsonCopy(p.graph);
  const nodes: Record<string, DiffMark> = {};
  const edges: Record<string, DiffMark> = {};
  for (const id of p.diff.nodes.added) nodes[id] = 'added';
  for (const id of p.diff.nodes.changed) nodes[id] = 'changed';
  for (const id of p.diff.nodes.removed) {
    const n = current.nodes.find((x) => x.id === id);
    if (!n) continue;
    graph.nodes.push(jsonCopy(n));
    nodes[id] = 'removed';
  }
  const added = new Set(p.diff.edges.added.map(key));
  for (const e of graph.edges) if (added.has(key(e))) edges[e.id] = 'added';
  const removed = new Set(p.diff.edges.removed.map(key));
  for (const e of current.edges) {
    if (!removed.has(key(e))) continue;
    const id = graph.edges.some((x) => x.id === e.id) ? `${e.id}__removed` : e.id;
    graph.edges.push({ ...jsonCopy(e), id });
    edges[id] = 'removed';
  }
  return { graph, nodes, edges };
}

export type StaleReason = 'canvas' | 'revision';

/** Why a proposal may no longer be applied: the canvas or the saved revision moved since it was made. */
export function staleReason(p: Proposal, graph: WorkflowGraph, at: { workflowId?: string; revision: number }): StaleReason | undefined {
  if (canvasFingerprint(graph) !== p.base.fingerprint) return 'canvas';
  if (p.base.workflowId && p.base.workflowId !== at.workflowId) return 'revision';
  if (p.base.revision !== undefined && p.base.revision !== at.revision) return 'revision';
  return undefined;
}

/** The graph an applied proposal puts on the canvas: tool nodes bound to the live catalog entries. */
export function rehydrate(p: Proposal, catalog: readonly CatalogEntry[]): WorkflowGraph {
  const graph = parseGraph(jsonCopy(p.graph)) ?? jsonCopy(p.graph);
  syncWithCatalog(graph, catalog);
  return graph;
}

/** vue-flow node type of a card in the diff preview. */
export const DIFF_NODE = 'fy-diff';

export interface DiffNodeData {
  mark: DiffMark | 'same';
  title: string;
  subtitle: string;
  start: boolean;
}

const MARK_COLORS: Record<DiffMark | 'same', string> = { added: '#4caf50', changed: '#ffb938', removed: '#ef5350', same: '#757575' };

/** The diff preview as vue-flow nodes and edges (display only; nothing here is ever saved). */
export function diffCanvas(view: DiffView) {
  const nodes = view.graph.nodes.map((n) => {
    const mark: DiffMark | 'same' = (view.nodes[n.id] as DiffMark | undefined) ?? 'same';
    const data: DiffNodeData = {
      mark,
      start: n.type === 'start',
      title: n.type === 'start' ? 'Start' : n.data.title || (n.type === 'tool' ? n.tool.name : n.id),
      subtitle: n.type === 'tool' ? n.tool.name : n.type === 'start' ? n.data.fields.map((f) => f.name).join(', ') : n.type,
    };
    // the preview is flat: a body node is drawn where it sits on the canvas
    return { id: n.id, type: DIFF_NODE, position: absolutePosition(view.graph, n), data, class: `fy-diff-${mark}`, deletable: false, connectable: false };
  });
  const edges = view.graph.edges.map((e) => {
    const mark: DiffMark | 'same' = (view.edges[e.id] as DiffMark | undefined) ?? 'same';
    return { id: e.id, source: e.source, target: e.target, sourceHandle: 'out', targetHandle: 'in', class: `fy-diff-${mark}`, animated: mark === 'added', style: { stroke: MARK_COLORS[mark], strokeWidth: mark === 'same' ? 1.5 : 2.5, ...(mark === 'removed' ? { strokeDasharray: '6 4' } : {}) } };
  });
  return { nodes, edges };
}

export const diffColor = (mark: DiffMark | 'same') => MARK_COLORS[mark];
