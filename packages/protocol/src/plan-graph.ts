import type { JsonSchema } from './catalog';
import type { AgentPlan, PlanStep } from './plan';
import { inputContract } from './workflow';

/**
 * The authored canvas graph and its one translation to and from the AgentPlan.
 *
 * A workflow definition stores the graph verbatim next to its compiled plan. The graph is
 * FengYu's own document shape, independent of any canvas library: nodes are keyed by id (the
 * step id in the compiled plan), never by display names. The canvas compiles it with
 * `graphToPlan`; the host (definitions saved without a graph, templates) and the AI authoring
 * tools rebuild one with `planToGraph`. Both directions live here only, so the canvas, the host
 * and the model can never disagree about what a graph means.
 *
 * Round trip: for a plan whose steps come in dependency order (every `dependsOn` names an
 * earlier step) and in the canonical shape `graphToPlan` emits, `graphToPlan(planToGraph(p),
 * p.goal).plan` equals `p`. Any other valid plan is normalized once (steps reordered into the
 * canvas' reading order, empty fields dropped) and is a fixed point from then on. Pure; no I/O.
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
 * `file` → string with `format: "fengyu-file"` (an uploaded file, bound as `@file:<name>`).
 */
export type FieldType = 'text' | 'number' | 'integer' | 'boolean' | 'list' | 'object' | 'file';
/** Every field type, in the order the field editor offers them. */
export const FIELD_TYPES: readonly FieldType[] = ['text', 'number', 'integer', 'boolean', 'list', 'object', 'file'];

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
  retry?: { maxAttempts: number; initialBackoffMs?: number };
  /** A finished step's result, served without executing (compiled into the step's `pinned`). */
  pinned?: { result: unknown };
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

/** A node of the graph: the Start node, a tool step or a model step. */
export type GraphNode =
  // The Start node: id `start`, holds the workflow's input fields.
  | { id: string; type: 'start'; position: GraphPosition; data: StartData }
  // A tool step: id is the step id; `tool` names the catalog tool it calls.
  | { id: string; type: 'tool'; tool: ToolRef; position: GraphPosition; data: StepData }
  // A model step: id is the step id; the model carries out `data.instruction`.
  | { id: string; type: 'model'; position: GraphPosition; data: StepData };

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

/** A connection: the target step depends on the source step (edges from Start carry no dependency). */
export interface GraphEdge {
  /** The edge's id, unique among the graph's edges (`e_<source>_<target>` when generated). */
  id: string;
  /** The upstream node id. */
  source: string;
  /** The downstream node id. */
  target: string;
  /** The output row the edge was drawn from (`out` for the whole result, or `field:<name>`). */
  sourceHandle?: string;
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
 * A node that compiles to a plan step (a tool or model node); its id is the step id, so it
 * follows the step id rule.
 */
export type StepNode = Extract<GraphNode, { type: 'tool' | 'model' }>;
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

/** True for a tool or model node (one that compiles to a plan step). */
export function isStepNode(node: GraphNode): node is StepNode {
  return node.type === 'tool' || node.type === 'model';
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

/**
 * Reads a stored or model-written graph defensively (it may be absent, older, or hand-edited):
 * malformed nodes, edges and notes are dropped; dangling edges are kept, for diagnostics.
 * Undefined when `value` is not an object with a `nodes` array. A node needs a string id and a
 * known type; a step node without arguments gets `{}`, a node without a position (0, 0); an
 * edge needs string id, source and target; a note needs a string id and gets `text: ''`.
 * The result is always at `GRAPH_VERSION`. Nodes are adjusted in place.
 */
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

// ── Start fields ⇄ input schema ────────────────────────────────────────────────────────────

/** Schema keywords a Start field models itself; every other keyword travels in `extra`. */
const MODELLED_KEYWORDS = new Set(['type', 'title', 'description', 'enum', 'examples', 'format', 'items']);
/** The field type of each JSON Schema `type`; any other type (and none) is `text`. */
const FIELD_TYPE_OF_SCHEMA: Record<string, FieldType> = { number: 'number', integer: 'integer', boolean: 'boolean', array: 'list', object: 'object' };

/** A property's field type: `file` for `format: "fengyu-file"`, else by its `type`. */
function fieldTypeOf(prop: JsonSchema): FieldType {
  if (prop.format === 'fengyu-file') return 'file';
  return FIELD_TYPE_OF_SCHEMA[String(prop.type)] ?? 'text';
}

/** True for exactly `{type: "string"}`, the `items` a `list` field implies. */
function isPlainItems(items: unknown): boolean {
  return !!items && typeof items === 'object' && Object.keys(items).length === 1 && (items as JsonSchema).type === 'string';
}

/**
 * The Start fields of an input schema, in property order; keywords the field editor does not
 * model are kept in `extra` (so are a non-file `format` and `items` other than `{type:
 * "string"}`). Enum values become string options; only the first example is kept.
 */
export function schemaToFields(schema: JsonSchema | undefined): StartField[] {
  const props = (schema?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set(Array.isArray(schema?.required) ? (schema.required as string[]) : []);
  return Object.entries(props).map(([name, prop]) => {
    const field: StartField = { name, type: fieldTypeOf(prop) };
    if (typeof prop.title === 'string') field.label = prop.title;
    if (typeof prop.description === 'string') field.description = prop.description;
    if (required.has(name)) field.required = true;
    if (Array.isArray(prop.enum)) field.options = prop.enum.map(String);
    if (Array.isArray(prop.examples) && prop.examples.length > 0) field.example = prop.examples[0];
    const extra: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(prop)) if (!MODELLED_KEYWORDS.has(k)) extra[k] = v;
    if (prop.format !== undefined && prop.format !== 'fengyu-file') extra.format = prop.format;
    if (prop.items !== undefined && !isPlainItems(prop.items)) extra.items = prop.items;
    if (Object.keys(extra).length > 0) field.extra = extra;
    return field;
  });
}

/**
 * The JSON Schema of one Start field: its type, then `title`, `description`, `enum` and
 * `examples` when set (an empty-string example is dropped); `extra` keywords are applied last
 * and win.
 */
export function fieldSchema(field: StartField): JsonSchema {
  const prop: JsonSchema = {};
  if (field.type === 'file') Object.assign(prop, { type: 'string', format: 'fengyu-file' });
  else if (field.type === 'list') Object.assign(prop, { type: 'array', items: { type: 'string' } });
  else prop.type = field.type === 'text' ? 'string' : field.type;
  if (field.label) prop.title = field.label;
  if (field.description) prop.description = field.description;
  if (field.options && field.options.length > 0) prop.enum = [...field.options];
  if (field.example !== undefined && field.example !== '') prop.examples = [field.example];
  return { ...prop, ...(field.extra ?? {}) };
}

/**
 * The input schema of a Start node's fields: `type: "object"`, one property per named field
 * (nameless fields are skipped), and `required` only when some field is required.
 */
export function fieldsToSchema(fields: readonly StartField[]): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  for (const f of fields) if (f.name) properties[f.name] = fieldSchema(f);
  const required = fields.filter((f) => f.required && f.name).map((f) => f.name);
  return { type: 'object', properties, ...(required.length > 0 ? { required } : {}) };
}

/**
 * A field bound as `@file:<name>` (an uploaded file or a run's shared directory), decided by the
 * same input contract the validator reads: such an input is never a `{{inputs.<name>}}` value.
 */
export function isFileBound(field: StartField): boolean {
  const c = inputContract({ type: 'object', properties: { [field.name]: fieldSchema(field) } });
  return c.files.length > 0 || c.sharedDirectories.length > 0;
}

/**
 * A valid Start field name: usable as `{{inputs.<name>}}` and `@file:<name>`: a letter or
 * `_`, then letters, digits, `_` or `-` (the same rule as `INPUT_NAME_PATTERN`).
 */
export const FIELD_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]*$/;

/**
 * Problems of the field list itself: each name matches `FIELD_NAME_PATTERN`
 * (`field_name_invalid`) and is unique (`field_name_duplicate` on each repeat). `index` is the
 * field's 0-based position.
 */
export function fieldProblems(fields: readonly StartField[]): Array<{ index: number; code: 'field_name_invalid' | 'field_name_duplicate' }> {
  const seen = new Set<string>();
  const out: Array<{ index: number; code: 'field_name_invalid' | 'field_name_duplicate' }> = [];
  fields.forEach((f, index) => {
    if (!FIELD_NAME_PATTERN.test(f.name)) out.push({ index, code: 'field_name_invalid' });
    else if (seen.has(f.name)) out.push({ index, code: 'field_name_duplicate' });
    seen.add(f.name);
  });
  return out;
}

// ── graph → plan ───────────────────────────────────────────────────────────────────────────

/** Position order: left to right, then top to bottom, then by id. */
function byPosition(a: StepNode, b: StepNode): number {
  return a.position.x - b.position.x || a.position.y - b.position.y || a.id.localeCompare(b.id);
}

/**
 * Direct step dependencies of each step node, from the edges: every step node has an entry
 * (empty when it has no upstream step); duplicates, edges from Start, and edges whose ends are
 * not step nodes are ignored.
 */
export function graphDependencies(graph: WorkflowGraph): Map<string, string[]> {
  const steps = new Set(graph.nodes.filter(isStepNode).map((n) => n.id));
  const deps = new Map<string, string[]>([...steps].map((id) => [id, []]));
  for (const e of graph.edges) {
    if (!steps.has(e.target) || !steps.has(e.source)) continue;
    const list = deps.get(e.target) as string[];
    if (!list.includes(e.source)) list.push(e.source);
  }
  return deps;
}

/**
 * The canvas' reading order of the step nodes: a topological order that always takes the
 * ready node first in position order (left to right, then top to bottom, then id); nodes caught
 * in a cycle follow in position order. This order gives `{{steps.N}}` its meaning (N is the
 * 1-based position in it).
 */
export function orderStepNodes(graph: WorkflowGraph): StepNode[] {
  const nodes = graph.nodes.filter(isStepNode).sort(byPosition);
  const deps = graphDependencies(graph);
  const done = new Set<string>();
  const out: StepNode[] = [];
  let progress = true;
  while (progress) {
    progress = false;
    const next = nodes.find((n) => !done.has(n.id) && (deps.get(n.id) ?? []).every((d) => done.has(d)));
    if (next) {
      done.add(next.id);
      out.push(next);
      progress = true;
    }
  }
  for (const n of nodes) if (!done.has(n.id)) out.push(n);
  return out;
}

/**
 * The plan step of one node, in canonical shape: an empty title, an empty `dependsOn`, a false
 * `requiresApproval`, a one-attempt retry and a model node's empty arguments are left out; a
 * tool step always has `arguments`; a model step always has an `instruction` (maybe empty).
 */
function stepOf(node: StepNode, dependsOn: string[]): PlanStep {
  const d = node.data;
  const step: PlanStep = { id: node.id };
  if (d.title) step.title = d.title;
  if (node.type === 'tool') step.tool = node.tool.name;
  if (node.type === 'model') step.instruction = d.instruction ?? '';
  if (node.type === 'tool' || Object.keys(d.arguments ?? {}).length > 0) step.arguments = jsonCopy(d.arguments ?? {});
  if (dependsOn.length > 0) step.dependsOn = [...dependsOn];
  if (d.requiresApproval) step.requiresApproval = true;
  if (d.retry && d.retry.maxAttempts > 1) step.retry = { ...d.retry };
  if (d.pinned) step.pinned = { result: jsonCopy(d.pinned.result) };
  return step;
}

/**
 * Compiles a graph: step nodes in reading order become plan steps, edges between steps become
 * `dependsOn` (edges from Start carry none: inputs are always available), the Start node's
 * fields become the input schema. Notes and per-argument source choices are not compiled.
 */
export function graphToPlan(graph: WorkflowGraph, goal?: string): CompiledGraph {
  const deps = graphDependencies(graph);
  const steps = orderStepNodes(graph).map((n) => stepOf(n, deps.get(n.id) ?? []));
  const plan: AgentPlan = goal ? { goal, steps } : { steps };
  return { plan, inputSchema: fieldsToSchema(startNode(graph)?.data.fields ?? []) };
}

// ── plan → graph ───────────────────────────────────────────────────────────────────────────

/**
 * Dependency columns that keep plan order: a step sits right of each of its dependencies and
 * never left of the step before it. Sorted by position, the nodes then read in plan order, so
 * `graphToPlan` gives the steps back in the same order (and `{{steps.N}}` keeps its meaning).
 */
function columns(plan: AgentPlan): Map<string, number> {
  const col = new Map<string, number>();
  let previous = 1;
  for (const step of plan.steps) {
    const parents = (step.dependsOn ?? []).map((d) => col.get(d)).filter((c): c is number => c !== undefined);
    const value = Math.max(previous, parents.length > 0 ? 1 + Math.max(...parents) : 1);
    col.set(step.id, value);
    previous = value;
  }
  return col;
}

/**
 * Builds a laid-out graph from a plan and its input schema: a Start node with the inputs, one
 * tool or model node per step, an edge per dependency and one from Start to each root step.
 * Positions from `layout` (by node id) win over the computed columns.
 */
export function planToGraph(plan: AgentPlan, inputSchema?: JsonSchema, layout?: GraphLayout | null): WorkflowGraph {
  const graph = emptyGraph();
  const start = startNode(graph) as StartNode;
  start.data.fields = schemaToFields(inputSchema);
  if (layout?.[START_ID]) start.position = { ...layout[START_ID] };
  const col = columns(plan);
  const rows = new Map<number, number>();
  for (const step of plan.steps) {
    const c = col.get(step.id) ?? 1;
    const row = rows.get(c) ?? 0;
    rows.set(c, row + 1);
    const saved = layout?.[step.id];
    const position = saved ? { x: saved.x, y: saved.y } : { x: START_POSITION.x + c * GRAPH_COLUMN_WIDTH, y: START_POSITION.y + row * GRAPH_ROW_HEIGHT };
    const data: StepData = {
      ...(step.title ? { title: step.title } : {}),
      arguments: jsonCopy(step.arguments ?? {}),
      ...(step.instruction !== undefined && !step.tool ? { instruction: step.instruction } : {}),
      ...(step.requiresApproval ? { requiresApproval: true } : {}),
      ...(step.retry ? { retry: { ...step.retry } } : {}),
      ...(step.pinned ? { pinned: { result: jsonCopy(step.pinned.result) } } : {}),
    };
    graph.nodes.push(step.tool ? { id: step.id, type: 'tool', tool: { name: step.tool }, position, data } : { id: step.id, type: 'model', position, data });
    const parents = step.dependsOn ?? [];
    if (parents.length === 0) graph.edges.push(planEdge(START_ID, step.id));
    for (const p of parents) graph.edges.push(planEdge(p, step.id));
  }
  return graph;
}

/** The edge `planToGraph` draws for a dependency (or from Start to a root step). */
function planEdge(source: string, target: string): GraphEdge {
  return { id: `e_${source}_${target}`, source, target };
}
