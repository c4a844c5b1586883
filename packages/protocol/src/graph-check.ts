import { canonicalJson, stableHash } from './catalog';
import type { Problem } from './errors';
import { fieldProblems } from './graph-fields';
import { type GraphEdge, type GraphNode, isStepNode, jsonCopy, type StepData, startNode, type WorkflowGraph } from './graph-model';
import { graphToPlan } from './plan-graph';
import { type DefinitionContext, validateWorkflowDefinition } from './workflow';

/**
 * Problems of an authored graph, as the canvas shows them and the AI authoring tools report
 * them: connections whose end no longer exists, bad Start field names, and everything the
 * save-time validator finds in the compiled plan (unknown or unavailable tools, missing required
 * arguments, malformed references, cycles). Nothing is changed. Pure.
 */

/** One problem of a graph, located on a node and/or an edge. */
export interface GraphDiagnostic {
  /**
   * A stable error code (messages in the protocol's error table, or the canvas' own):
   * `edge_dangling`, `field_name_invalid`, `field_name_duplicate`, or any definition code.
   */
  code: string;
  /** The node (step id) it concerns, when it concerns one. */
  nodeId?: string;
  /** The connection it concerns, when it concerns one. */
  edgeId?: string;
  /** The field of the step (or of the definition) it concerns. */
  field?: string;
  /** Values for the message's `{placeholders}`. */
  params: Record<string, unknown>;
}

/** Options of `checkGraph`. */
export interface GraphCheckOptions extends DefinitionContext {
  /**
   * The flow's goal (may reference `{{inputs.*}}` only); blank counts as none. Checked like a
   * saved definition's goal.
   */
  goal?: string;
}

/**
 * Every problem of an authored graph at once: dangling connections (`edge_dangling`), bad Start
 * fields (1-based `index` in params), then — when the graph has at least one step node — every
 * problem of the compiled definition, with `plan.` stripped from the field. An empty list when
 * the graph is sound.
 */
export function checkGraph(graph: WorkflowGraph, opts: GraphCheckOptions): GraphDiagnostic[] {
  const out: GraphDiagnostic[] = [];
  const ids = new Set(graph.nodes.map((n) => n.id));
  for (const e of graph.edges) {
    if (!ids.has(e.source) || !ids.has(e.target)) out.push({ code: 'edge_dangling', edgeId: e.id, nodeId: ids.has(e.source) ? e.source : undefined, params: { edge: `${e.source} → ${e.target}` } });
  }
  const start = startNode(graph);
  const fields = start?.data.fields ?? [];
  for (const p of fieldProblems(fields)) out.push({ code: p.code, nodeId: start?.id, params: { index: p.index + 1, name: fields[p.index]?.name ?? '' } });
  if (!graph.nodes.some(isStepNode)) return out;
  const { plan, inputSchema } = graphToPlan(graph, opts.goal?.trim() || undefined);
  const result = validateWorkflowDefinition({ name: 'flow', inputSchema, plan }, opts);
  if (!result.ok) out.push(...result.problems.map(fromProblem));
  return out;
}

/** A definition problem as a diagnostic on the step's node. */
function fromProblem(p: Problem): GraphDiagnostic {
  const field = p.field?.startsWith('plan.') ? p.field.slice(5) : p.field;
  return { code: p.code, nodeId: p.stepId, field, params: p.params ?? {} };
}

// ── diff ───────────────────────────────────────────────────────────────────────────────────

/** What a proposed graph changes, by node id and by connection (source → target). */
export interface GraphDiff {
  /**
   * Node ids: added (only in the proposal), changed (what it runs or with what differs; moves
   * and notes do not count) and removed (only in the current graph).
   */
  nodes: {
    /** Ids only in the proposal. */
    added: string[];
    /** Ids in both whose step differs. */
    changed: string[];
    /** Ids only in the current graph. */
    removed: string[];
  };
  /**
   * Edges are compared by their ends (`source→target`), never by id: added connections are in
   * the proposal's order, removed ones in the current graph's order.
   */
  edges: {
    /** Connections only in the proposal, in its order. */
    added: GraphEdgeKey[];
    /** Connections only in the current graph, in its order. */
    removed: GraphEdgeKey[];
  };
}

/** A connection named by its ends. */
export interface GraphEdgeKey {
  /** The node id the connection leaves. */
  source: string;
  /** The node id the connection enters. */
  target: string;
}

/** An edge's identity for diffing: its two ends, never its id. */
const edgeKey = (e: GraphEdge): string => `${e.source}\u0000${e.target}`;

/**
 * The compiled meaning of a node: what it runs and with what (positions, a group's size and
 * argument source choices excluded): its type, tool, the group it is in, and its data (title,
 * arguments, instruction, cases, items, join, approval, retry, pinned result); for the Start
 * node, its fields.
 */
function nodeMeaning(n: GraphNode): string {
  if (n.type === 'start') return JSON.stringify(['start', n.data.fields]);
  const { sources: _sources, width: _w, height: _h, ...rest } = n.data as StepData & { width?: number; height?: number };
  const meaning = jsonCopy(rest) as Record<string, unknown>;
  // an empty title, no approval and a model's empty instruction mean what their absence means
  if (!meaning.title) delete meaning.title;
  if (!meaning.requiresApproval) delete meaning.requiresApproval;
  if (n.type === 'model' && !meaning.instruction) delete meaning.instruction;
  return canonicalJson([n.type, n.type === 'tool' ? n.tool.name : null, n.type === 'forEach' ? null : (n.parentId ?? null), meaning]);
}

/**
 * What changes from `before` to `after`: nodes by id (added, changed, removed, in each graph's
 * order) and connections by their ends. Pure; neither graph is modified.
 */
export function diffGraphs(before: WorkflowGraph, after: WorkflowGraph): GraphDiff {
  const old = new Map(before.nodes.map((n) => [n.id, n]));
  const next = new Map(after.nodes.map((n) => [n.id, n]));
  const diff: GraphDiff = { nodes: { added: [], changed: [], removed: [] }, edges: { added: [], removed: [] } };
  for (const [id, n] of next) {
    const was = old.get(id);
    if (!was) diff.nodes.added.push(id);
    else if (nodeMeaning(was) !== nodeMeaning(n)) diff.nodes.changed.push(id);
  }
  for (const id of old.keys()) if (!next.has(id)) diff.nodes.removed.push(id);
  const oldEdges = new Set(before.edges.map(edgeKey));
  const newEdges = new Set(after.edges.map(edgeKey));
  for (const e of after.edges) if (!oldEdges.has(edgeKey(e))) diff.edges.added.push({ source: e.source, target: e.target });
  for (const e of before.edges) if (!newEdges.has(edgeKey(e))) diff.edges.removed.push({ source: e.source, target: e.target });
  return diff;
}

/** True when the diff changes nothing: no node added, changed or removed, no connection added or removed. */
export function isEmptyDiff(d: GraphDiff): boolean {
  return d.nodes.added.length + d.nodes.changed.length + d.nodes.removed.length + d.edges.added.length + d.edges.removed.length === 0;
}

/**
 * A fingerprint of a graph (layout included, key order ignored): a proposal records the canvas'
 * fingerprint, and applying it requires the canvas to still have it.
 */
export function graphFingerprint(graph: WorkflowGraph): string {
  return stableHash(jsonCopy(graph));
}
