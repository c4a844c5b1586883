import { jsonClone } from './json-clone';

/**
 * The saved workflow graph (the `graph` field of a workflow definition).
 *
 * This is FengYu's own document shape, deliberately independent of vue-flow's model: the
 * canvas maps to and from it in `canvas-map.ts` only. Nodes are keyed by id (the step id in
 * the compiled plan), never by display names.
 */

export const GRAPH_VERSION = 1;

export interface Position {
  x: number;
  y: number;
}

/** How an input's value is authored; remembered per argument so an empty expression stays one. */
export type InputSource = 'manual' | 'reference' | 'expression';

/** A field of the Start node: becomes one property of the workflow's input schema. */
export interface StartField {
  name: string;
  label?: string;
  type: FieldType;
  required?: boolean;
  /** Fixed choices (rendered as a dropdown). */
  options?: string[];
  example?: unknown;
  description?: string;
  /** Schema keywords the editor does not model (x-fengyu-enum, x-fengyu-auto, …), kept verbatim. */
  extra?: Record<string, unknown>;
}

export type FieldType = 'text' | 'number' | 'integer' | 'boolean' | 'list' | 'object' | 'file';
export const FIELD_TYPES: readonly FieldType[] = ['text', 'number', 'integer', 'boolean', 'list', 'object', 'file'];

export interface StartData {
  fields: StartField[];
}

/** Identity of the catalog tool a node calls (stable `id`, e.g. "fan.summer.excel:excel_execute"). */
export interface ToolRef {
  name: string;
  id?: string;
  schemaRevision?: string;
}

export interface StepData {
  title?: string;
  arguments: Record<string, unknown>;
  /** Per-argument source choice; absent = derived from the value. */
  sources?: Record<string, InputSource>;
  /** Model steps only. */
  instruction?: string;
  requiresApproval?: boolean;
  retry?: { maxAttempts: number; initialBackoffMs?: number };
  /** A finished step's result, served without executing (compiled into the step's `pinned`). */
  pinned?: { result: unknown };
}

export interface NoteData {
  text: string;
  width?: number;
  height?: number;
}

export type GraphNode =
  | { id: string; type: 'start'; position: Position; data: StartData }
  | { id: string; type: 'tool'; tool: ToolRef; position: Position; data: StepData }
  | { id: string; type: 'model'; position: Position; data: StepData };

export interface GraphNote {
  id: string;
  type: 'note';
  position: Position;
  data: NoteData;
}

export interface GraphEdge {
  id: string;
  source: string;
  target: string;
  /** The output row the edge was drawn from (`out` for the whole result, or `field:<name>`). */
  sourceHandle?: string;
}

export interface WorkflowGraph {
  version: number;
  nodes: GraphNode[];
  edges: GraphEdge[];
  notes: GraphNote[];
}

export type StepNode = Extract<GraphNode, { type: 'tool' | 'model' }>;

export function isStepNode(node: GraphNode): node is StepNode {
  return node.type === 'tool' || node.type === 'model';
}

export const START_ID = 'start';

export function emptyGraph(): WorkflowGraph {
  return {
    version: GRAPH_VERSION,
    nodes: [{ id: START_ID, type: 'start', position: { x: 80, y: 200 }, data: { fields: [] } }],
    edges: [],
    notes: [],
  };
}

export function startNode(graph: WorkflowGraph): Extract<GraphNode, { type: 'start' }> | undefined {
  return graph.nodes.find((n): n is Extract<GraphNode, { type: 'start' }> => n.type === 'start');
}

export function cloneGraph(graph: WorkflowGraph): WorkflowGraph {
  return jsonClone(graph) as WorkflowGraph;
}

/** A fresh id that is a valid step id (^[A-Za-z][A-Za-z0-9_-]{0,63}$) and unused in the graph. */
export function newNodeId(graph: WorkflowGraph, base: string): string {
  const slug = base.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^[^A-Za-z]+/, '').slice(0, 40) || 'step';
  const taken = new Set([...graph.nodes.map((n) => n.id), ...graph.notes.map((n) => n.id)]);
  if (!taken.has(slug)) return slug;
  for (let i = 2; ; i++) if (!taken.has(`${slug}_${i}`)) return `${slug}_${i}`;
}

export function newEdgeId(graph: WorkflowGraph, source: string, target: string): string {
  const taken = new Set(graph.edges.map((e) => e.id));
  const base = `e_${source}_${target}`;
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base}_${i}`)) return `${base}_${i}`;
}

/** Reads a stored graph defensively (it may be absent, older, or hand-edited). */
export function parseGraph(value: unknown): WorkflowGraph | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const g = value as Partial<WorkflowGraph>;
  if (!Array.isArray(g.nodes)) return undefined;
  const nodes = g.nodes.filter((n): n is GraphNode => !!n && typeof n.id === 'string' && ['start', 'tool', 'model'].includes(n.type));
  const edges = (Array.isArray(g.edges) ? g.edges : []).filter(
    (e): e is GraphEdge => !!e && typeof e.id === 'string' && typeof e.source === 'string' && typeof e.target === 'string',
  );
  const notes = (Array.isArray(g.notes) ? g.notes : []).filter((n): n is GraphNote => !!n && typeof n.id === 'string');
  for (const n of nodes) {
    if (n.type !== 'start') n.data = Object.assign({ arguments: {} }, n.data ?? {}) as StepData;
    if (!n.position) n.position = { x: 0, y: 0 };
  }
  return { version: GRAPH_VERSION, nodes, edges, notes: notes.map((n) => ({ ...n, type: 'note', data: Object.assign({ text: '' }, n.data ?? {}) })) };
}
