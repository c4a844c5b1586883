import type { JsonSchema } from './catalog';
import type { ConditionCase } from './control-flow';
import type { AgentPlan, OnError } from './plan';

/**
 * The authored canvas graph: FengYu's own document shape, independent of any canvas library.
 * Nodes are keyed by id (the step id in the compiled plan), never by display names. This file
 * holds the shape and small helpers; `plan-graph.ts` translates it to and from the AgentPlan,
 * `graph-fields.ts` maps the Start node's fields to the input schema. Pure; no I/O.
 */

/**
 * Version of the graph document shape; stored in `WorkflowGraph.version`. `parseGraph` reads
 * any stored graph into this version.
 */
export const GRAPH_VERSION = 1;
/**
 * Id of the Start node (the workflow's inputs); never a step id in the compiled plan. Edges
 * from it carry no dependency: inputs are always available.
 */
export const START_ID = 'start';
/**
 * Where the Start node sits in a graph built from scratch; rebuilt step columns start one
 * `GRAPH_COLUMN_WIDTH` to its right.
 */
export const START_POSITION: Readonly<GraphPosition> = { x: 80, y: 200 };
/** Horizontal distance between dependency columns of a rebuilt graph, in canvas units. */
export const GRAPH_COLUMN_WIDTH = 300;
/**
 * Vertical distance between nodes of one column of a rebuilt graph, in canvas units; the
 * first node of each column is level with the Start node.
 */
export const GRAPH_ROW_HEIGHT = 160;

/** A canvas position, in canvas units (x grows rightwards, y downwards). */
export interface GraphPosition {
  /** Horizontal position, in canvas units. */
  x: number;
  /** Vertical position, in canvas units. */
  y: number;
}

/**
 * How a node argument's value is authored; remembered per argument so an empty expression stays
 * one: `manual` (a literal value), `reference` (one `{{…}}` picked from upstream results or
 * inputs), `expression` (text mixing literals and placeholders).
 */
export type InputSource = 'manual' | 'reference' | 'expression';

/**
 * The kind of value a Start field takes; decides its JSON Schema type and the run form's widget:
 * `text` → string, `number`, `integer`, `boolean`, `list` → array of strings, `object`, and
 * `file` → string with `format: "fengyu-file"` (an uploaded file, bound as `@file:<name>`), and
 * `folder` → string with `"x-fengyu-auto": "shared-directory"` (a folder created for each run,
 * bound as `@file:<name>`, where steps write their output; nobody fills it in).
 */
export type FieldType = 'text' | 'number' | 'integer' | 'boolean' | 'list' | 'object' | 'file' | 'folder';
/** Every field type, in the order the field editor offers them. */
export const FIELD_TYPES: readonly FieldType[] = ['text', 'number', 'integer', 'boolean', 'list', 'object', 'file', 'folder'];

/** A field of the Start node: becomes one property of the workflow's input schema. */
export interface StartField {
  /**
   * The input name, referenced as `{{inputs.<name>}}` (or `@file:<name>` for a file); matches
   * `FIELD_NAME_PATTERN` and is unique among the fields.
   */
  name: string;
  /** Display label (the schema's `title`). */
  label?: string;
  /** The kind of value; `file` becomes `type: "string", format: "fengyu-file"`, `list` an array of strings. */
  type: FieldType;
  /** Listed in the schema's `required`. */
  required?: boolean;
  /** Fixed choices (the schema's `enum`), rendered as a dropdown. */
  options?: string[];
  /** An example value (the first of the schema's `examples`). */
  example?: unknown;
  /** Help text (the schema's `description`). */
  description?: string;
  /** Schema keywords the editor does not model (x-fengyu-enum, x-fengyu-auto, …), kept verbatim. */
  extra?: Record<string, unknown>;
}

/**
 * Data of the Start node. Its fields compile to the workflow's input schema (see
 * `fieldsToSchema`) and are rebuilt from it (see `schemaToFields`).
 */
export interface StartData {
  /** The workflow's inputs, in display order. */
  fields: StartField[];
}

/**
 * Identity of the catalog tool a node calls (stable `id`, e.g. "fan.summer.excel:excel_execute").
 * Only `name` is compiled; `id` and `schemaRevision` help the canvas notice a renamed or
 * changed tool.
 */
export interface ToolRef {
  /** The catalog tool name the compiled step calls. */
  name: string;
  /** The catalog entry's stable id, when known. */
  id?: string;
  /** The tool's schema revision when the node was configured (to notice a changed contract). */
  schemaRevision?: string;
}

/** Data of a tool or model node; compiles to the fields of one plan step. */
export interface StepData {
  /** Display title (the step's `title`). */
  title?: string;
  /** The step's arguments; strings may carry `{{…}}` references and `@file:` placeholders. */
  arguments: Record<string, unknown>;
  /**
   * Per-argument source choice, keyed like `arguments`; absent = derived from the value. Not
   * compiled.
   */
  sources?: Record<string, InputSource>;
  /** Model steps only: what the model should do. */
  instruction?: string;
  /** Pause before the step for a human decision. */
  requiresApproval?: boolean;
  /**
   * Total attempts and first backoff in milliseconds (compiled only when more than one
   * attempt); the same rules as the step's `retry`.
   */
  retry?: {
    /** Total attempts, the first included. */
    maxAttempts: number;
    /** The wait before the second attempt, in milliseconds. */
    initialBackoffMs?: number;
  };
  /** A finished step's result, served without executing (compiled into the step's `pinned`). */
  pinned?: {
    /** The result served. */
    result: unknown;
  };
  /**
   * `any`: the step runs once every incoming connection is settled and at least one is
   * satisfied (compiled into `join: "any"`); absent: every one must be satisfied.
   */
  join?: 'any';
  /**
   * What the step's failure does (the step's `onError`, compiled as written; absent = `fail`).
   * With `branch` the node offers the ports `port:ok` and `port:error`.
   */
  onError?: OnError;
  /** How long one attempt may take, in milliseconds (the step's `timeoutMs`); absent = the tool's own. */
  timeoutMs?: number;
  /**
   * Step fields the canvas does not model (e.g. `kind: "input"` fields), kept verbatim so a plan
   * survives the canvas; compiled first, so a field the canvas models always wins.
   */
  extra?: Record<string, unknown>;
}

/**
 * Data of a condition node: its cases in order (each with a structured `when`, or with a
 * `description` for a model condition). A model condition ("Condition Agent") has an
 * `instruction` (maybe empty while being written); a structured one has none. `arguments` stays
 * empty.
 */
export interface ConditionData extends StepData {
  /** The cases, tried in order; each is one output handle (`port:<name>`), plus `else`. */
  cases: ConditionCase[];
}

/**
 * Data of a forEach group node. Its body is the nodes whose `parentId` is the group's id; their
 * positions are relative to the group's top-left corner. `arguments` stays empty.
 */
export interface ForEachData extends StepData {
  /** The list: one reference to an array (`{{node.split.result.files}}`) or a literal array. */
  items: unknown;
  /** Iterations in flight at once (1..8); absent = 1. */
  concurrency?: number;
  /** The most items accepted (1..10000); absent = 1000. */
  maxItems?: number;
  /** The group's width in canvas units, when resized (default `GROUP_SIZE.width`). */
  width?: number;
  /** The group's height in canvas units, when resized (default `GROUP_SIZE.height`). */
  height?: number;
}

/**
 * Data of a Human Input node: the form a person fills in (a JSON Schema of `type: "object"`, see
 * `input-form.ts`), what happens on timeout and the values used then. Its wait is the node's
 * `timeoutMs`, as for every step. `arguments` stays empty.
 */
export interface InputData extends StepData {
  /** The form: `{type: "object", properties: {…}, required?: […]}`. */
  form: Record<string, unknown>;
  /** `default`: on timeout the step completes with `defaults`; absent: it fails `gate_expired`. */
  onTimeout?: 'fail' | 'default';
  /** The values used on timeout with `onTimeout: "default"`. */
  defaults?: Record<string, unknown>;
}

/** Data of a sticky note (not compiled). */
export interface NoteData {
  /** The note's text; empty when a stored note had none. */
  text: string;
  /** Width in canvas units, when resized. */
  width?: number;
  /** Height in canvas units, when resized. */
  height?: number;
}

/**
 * A node of the graph: the Start node, a tool, model or condition step, or a forEach group.
 * `parentId` (tool, model and condition nodes) names the forEach group whose body the node is
 * in; its `position` is then relative to the group's top-left corner.
 */
export type GraphNode =
  | {
      /** Always `start`. */
      id: string;
      /** The Start node: holds the workflow's input fields. */
      type: 'start';
      /** Where the node sits: canvas units, relative to its group when it has `parentId`. */
      position: GraphPosition;
      /** The workflow's input fields. */
      data: StartData;
    }
  | {
      /** The step id (the plan step's `id`). */
      id: string;
      /** A tool step. */
      type: 'tool';
      /** The catalog tool it calls. */
      tool: ToolRef;
      /** Where the node sits: canvas units, relative to its group when it has `parentId`. */
      position: GraphPosition;
      /** The forEach group whose body holds the node; absent at the top level. */
      parentId?: string;
      /** The step's title, arguments and run options. */
      data: StepData;
    }
  | {
      /** The step id (the plan step's `id`). */
      id: string;
      /** A model step: the model carries out `data.instruction`. */
      type: 'model';
      /** Where the node sits: canvas units, relative to its group when it has `parentId`. */
      position: GraphPosition;
      /** The forEach group whose body holds the node; absent at the top level. */
      parentId?: string;
      /** The step's title, instruction, arguments and run options. */
      data: StepData;
    }
  | {
      /** The step id (the plan step's `id`). */
      id: string;
      /** A condition step: one output handle per case plus `else` (edges from `port:<name>`). */
      type: 'condition';
      /** Where the node sits: canvas units, relative to its group when it has `parentId`. */
      position: GraphPosition;
      /** The forEach group whose body holds the node; absent at the top level. */
      parentId?: string;
      /** Its cases. */
      data: ConditionData;
    }
  | {
      /** The step id (the plan step's `id`). */
      id: string;
      /** An input step (Human Input): the run waits for a person's values in its form. */
      type: 'input';
      /** Where the node sits: canvas units, relative to its group when it has `parentId`. */
      position: GraphPosition;
      /** The forEach group whose body holds the node; absent at the top level. */
      parentId?: string;
      /** Its question, form and timeout. */
      data: InputData;
    }
  | {
      /** The step id (the plan step's `id`). */
      id: string;
      /** A forEach step: a resizable group holding its body (never inside another group). */
      type: 'forEach';
      /** Where the node sits: canvas units, relative to its group when it has `parentId`. */
      position: GraphPosition;
      /** Its list, size and body options. */
      data: ForEachData;
    };

/**
 * A sticky note on the canvas; kept in the graph, never compiled. Moving or editing a note does
 * not count as a change to the flow.
 */
export interface GraphNote {
  /** The note's id, unique among the graph's nodes and notes. */
  id: string;
  /** Always `note`. */
  type: 'note';
  /** Where the note sits. */
  position: GraphPosition;
  /** The note's text and size. */
  data: NoteData;
}

/**
 * A connection: the target step depends on the source step. Edges from Start, and from a forEach
 * group's inner start (`sourceHandle: "body"`) to its body, carry no dependency. An edge from a
 * port handle (`port:<name>`) is a dependency on that port (`dependsOn: ["<source>:<name>"]`).
 */
export interface GraphEdge {
  /** The edge's id, unique among the graph's edges (`e_<source>_<target>` when generated). */
  id: string;
  /** The upstream node id. */
  source: string;
  /** The downstream node id. */
  target: string;
  /**
   * The output the edge was drawn from: `out` (or absent) for the whole result, `field:<name>`
   * for one output row (display only), `port:<name>` for a port (a condition's case or `else`),
   * `body` for a forEach group's inner start.
   */
  sourceHandle?: string;
}

/** The handle prefix of a port (`port:big` → `dependsOn: ["check:big"]`). */
export const PORT_HANDLE_PREFIX = 'port:';
/** The handle of a forEach group's inner start: edges from it lead into the body, with no dependency. */
export const BODY_HANDLE = 'body';
/** A group's size before it is resized (AgentFlow's Iteration minimum is 300 × 250). */
export const GROUP_SIZE: Readonly<{ width: number; height: number }> = { width: 520, height: 260 };
/** The port name of a port handle (`port:big` → `big`), or undefined for any other handle. */
export function portOfHandle(handle: string | undefined): string | undefined {
  return handle?.startsWith(PORT_HANDLE_PREFIX) ? handle.slice(PORT_HANDLE_PREFIX.length) : undefined;
}

/** The authored canvas document, stored verbatim as a definition's `graph`. */
export interface WorkflowGraph {
  /** Always `GRAPH_VERSION` once parsed. */
  version: number;
  /** The Start node first by convention, then the steps. */
  nodes: GraphNode[];
  /** The connections; an edge from Start adds no dependency. */
  edges: GraphEdge[];
  /** Sticky notes; never compiled. */
  notes: GraphNote[];
}

/**
 * A node that compiles to a plan step (a tool, model, condition or forEach node); its id is the
 * step id, so it follows the step id rule.
 */
export type StepNode = Extract<GraphNode, { type: 'tool' | 'model' | 'condition' | 'forEach' | 'input' }>;
/** A Human Input node. */
export type InputNode = Extract<GraphNode, { type: 'input' }>;
/** A condition node. */
export type ConditionNode = Extract<GraphNode, { type: 'condition' }>;
/** A forEach group node. */
export type ForEachNode = Extract<GraphNode, { type: 'forEach' }>;
/** The Start node. */
export type StartNode = Extract<GraphNode, { type: 'start' }>;

/** The plan and input schema a graph compiles to. */
export interface CompiledGraph {
  /** The plan: one step per step node, in the canvas' reading order. */
  plan: AgentPlan;
  /** The input schema built from the Start node's fields (`type: "object"`). */
  inputSchema: JsonSchema;
}

/**
 * Node positions by node id (a saved layout; wins over the computed one when rebuilding). Ids
 * not in the plan are ignored.
 */
export type GraphLayout = Record<string, GraphPosition>;

/**
 * Deep copy of JSON data (works on reactive proxies, which structuredClone refuses). Values JSON
 * cannot hold are lost (`undefined` properties, functions); `undefined` itself is returned as is.
 */
export function jsonCopy<T>(value: T): T {
  return value === undefined ? value : (JSON.parse(JSON.stringify(value)) as T);
}

/** True for a node that compiles to a plan step (tool, model, condition, forEach, input). */
export function isStepNode(node: GraphNode): node is StepNode {
  return node.type === 'tool' || node.type === 'model' || node.type === 'condition' || node.type === 'forEach' || node.type === 'input';
}

/** The forEach group holding a node, when it is in a body (undefined for the Start node and top-level nodes). */
export function parentOf(node: GraphNode): string | undefined {
  return node.type === 'start' || node.type === 'forEach' ? undefined : node.parentId;
}

/** A node's position on the canvas (a body node's relative position plus its group's). */
export function absolutePosition(graph: WorkflowGraph, node: GraphNode): GraphPosition {
  const parent = parentOf(node);
  const group = parent ? graph.nodes.find((n) => n.id === parent) : undefined;
  return group ? { x: group.position.x + node.position.x, y: group.position.y + node.position.y } : { ...node.position };
}

/** A graph holding only a Start node without fields, at `START_POSITION`; no edges, no notes. */
export function emptyGraph(): WorkflowGraph {
  return {
    version: GRAPH_VERSION,
    nodes: [{ id: START_ID, type: 'start', position: { ...START_POSITION }, data: { fields: [] } }],
    edges: [],
    notes: [],
  };
}

/** The graph's Start node (the first one, if several), or undefined when it has none. */
export function startNode(graph: WorkflowGraph): StartNode | undefined {
  return graph.nodes.find((n): n is StartNode => n.type === 'start');
}

/** A deep copy of a graph (see `jsonCopy`). */
export function cloneGraph(graph: WorkflowGraph): WorkflowGraph {
  return jsonCopy(graph);
}

/**
 * A fresh id that is a valid step id (^[A-Za-z][A-Za-z0-9_-]{0,63}$) and unused by the graph's
 * nodes and notes: `base` with other characters turned to `_`, leading non-letters dropped, cut
 * to 40 characters (`step` when nothing is left), then `_2`, `_3`, … until unused.
 */
export function newNodeId(graph: WorkflowGraph, base: string): string {
  const slug = base.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^[^A-Za-z]+/, '').slice(0, 40) || 'step';
  const taken = new Set([...graph.nodes.map((n) => n.id), ...graph.notes.map((n) => n.id)]);
  if (!taken.has(slug)) return slug;
  for (let i = 2; ; i++) if (!taken.has(`${slug}_${i}`)) return `${slug}_${i}`;
}

/** A fresh edge id for a connection source → target: `e_<source>_<target>`, then `_2`, `_3`, … until unused. */
export function newEdgeId(graph: WorkflowGraph, source: string, target: string): string {
  const taken = new Set(graph.edges.map((e) => e.id));
  const base = `e_${source}_${target}`;
  if (!taken.has(base)) return base;
  for (let i = 2; ; i++) if (!taken.has(`${base}_${i}`)) return `${base}_${i}`;
}

/** The node types a graph holds. */
const NODE_TYPES: readonly string[] = ['start', 'tool', 'model', 'condition', 'forEach', 'input'];

/**
 * Reads a stored or model-written graph defensively (it may be absent, older, or hand-edited):
 * malformed nodes, edges and notes are dropped; dangling edges are kept, for diagnostics.
 * Undefined when `value` is not an object with a `nodes` array. A node needs a string id and a
 * known type; a step node without arguments gets `{}`, a node without a position (0, 0); an
 * edge needs string id, source and target; a note needs a string id and gets `text: ''`. A
 * condition without cases gets `[]`, a forEach without items `''`, an input without a form an
 * empty one; a `parentId` that names no
 * forEach group is dropped.
 * The result is always at `GRAPH_VERSION`. Nodes are adjusted in place.
 */
export function parseGraph(value: unknown): WorkflowGraph | undefined {
  if (!value || typeof value !== 'object') return undefined;
  const g = value as Partial<WorkflowGraph>;
  if (!Array.isArray(g.nodes)) return undefined;
  const nodes = g.nodes.filter((n): n is GraphNode => !!n && typeof n.id === 'string' && NODE_TYPES.includes(n.type));
  const groups = new Set(nodes.filter((n) => n.type === 'forEach').map((n) => n.id));
  const edges = (Array.isArray(g.edges) ? g.edges : []).filter(
    (e): e is GraphEdge => !!e && typeof e.id === 'string' && typeof e.source === 'string' && typeof e.target === 'string',
  );
  const notes = (Array.isArray(g.notes) ? g.notes : []).filter((n): n is GraphNote => !!n && typeof n.id === 'string');
  for (const n of nodes) {
    if (n.type !== 'start') n.data = Object.assign({ arguments: {} }, n.data ?? {}) as StepData;
    if (n.type === 'condition' && !Array.isArray(n.data.cases)) n.data.cases = [];
    if (n.type === 'forEach' && n.data.items === undefined) n.data.items = '';
    if (n.type === 'input' && (!n.data.form || typeof n.data.form !== 'object')) n.data.form = { type: 'object', properties: {} };
    // a body node whose group is gone (or is not a group) becomes a top-level node
    if (n.type !== 'start' && n.type !== 'forEach' && n.parentId !== undefined && !groups.has(n.parentId)) delete n.parentId;
    if (!n.position) n.position = { x: 0, y: 0 };
  }
  return { version: GRAPH_VERSION, nodes, edges, notes: notes.map((n) => ({ ...n, type: 'note', data: Object.assign({ text: '' }, n.data ?? {}) })) };
}
