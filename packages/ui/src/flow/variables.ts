import { type CatalogEntry, exactReference, fieldSchema, formatPath, getPath, graphDependencies, isFileBound, isStepNode, type JsonSchema, parentOf, type PathPart, secretPlaceholder, startNode, type WorkflowGraph } from '@fengyu/protocol';
import { declaredOutputSchema } from './flow-node';
import { fileRef, inputRef, nodeRef } from './input-source';
import { childSchema, compatible, schemaExample, schemaKind, type ValueKind, valueKind } from './value-kinds';

/**
 * The variable tree of the Reference source: workflow inputs plus the outputs of every node that
 * may feed the current one, as a recursive tree (object fields and `[0]` sample children), each
 * row typed and checked against the input's expected kind. Values degrade declared → example →
 * last run.
 */

export interface VariableRow {
  key: string;
  label: string;
  ref: string;
  path: PathPart[];
  kind: ValueKind;
  description?: string;
  example?: unknown;
  lastValue?: unknown;
  hasLast: boolean;
  compatible: boolean;
  /** Why the row does not fit the expected kind (e.g. "list ≠ text"). */
  mismatch?: { expected: ValueKind; actual: ValueKind };
  /** A file input (`@file:<name>`): usable only as a whole argument, never inside text. */
  wholeOnly?: boolean;
  /** A vault secret (`{{secrets.NAME}}`): offered by name with a lock, never with a value. */
  secret?: boolean;
  children: VariableRow[];
}

export interface VariableGroup {
  /** `inputs` or a node id. */
  id: string;
  nodeId?: string;
  label: string;
  /** Already a (transitive) prerequisite; picking from an unconnected group creates the edge. */
  connected: boolean;
  rows: VariableRow[];
}

export interface TreeContext {
  graph: WorkflowGraph;
  tool: (name: string) => CatalogEntry | undefined;
  lastResults?: ReadonlyMap<string, unknown>;
  /** The owner's secret names: offered to tool nodes only (tool-step arguments only, docs/secrets.md). */
  secretNames?: readonly string[];
}

const MAX_DEPTH = 5;

export function outputSchemaOf(entry: CatalogEntry | undefined): JsonSchema | undefined {
  return declaredOutputSchema(entry);
}

function childKeys(schema: JsonSchema | undefined, ...values: unknown[]): string[] {
  const keys = new Set<string>(Object.keys((schema?.properties as object) ?? {}));
  for (const v of values) if (v && typeof v === 'object' && !Array.isArray(v)) for (const k of Object.keys(v)) keys.add(k);
  return [...keys];
}

function pick(value: unknown, part: PathPart): unknown {
  if (value === null || value === undefined || typeof value !== 'object') return undefined;
  return (value as Record<string | number, unknown>)[part];
}

interface BuildArgs {
  makeRef: (path: PathPart[]) => string;
  label: string;
  path: PathPart[];
  schema: JsonSchema | undefined;
  example: unknown;
  last: unknown;
  hasLast: boolean;
  expected: ValueKind;
  depth: number;
}

function buildRow(a: BuildArgs): VariableRow {
  const declared = schemaKind(a.schema);
  const kind = declared !== 'any' ? declared : valueKind(a.hasLast ? a.last : a.example);
  const fit = compatible(a.expected, kind);
  const row: VariableRow = {
    key: a.makeRef(a.path),
    label: a.label,
    ref: a.makeRef(a.path),
    path: a.path,
    kind,
    ...(typeof a.schema?.description === 'string' ? { description: a.schema.description } : {}),
    example: a.example,
    lastValue: a.last,
    hasLast: a.hasLast,
    compatible: fit.ok,
    ...(fit.ok ? {} : { mismatch: { expected: a.expected, actual: kind } }),
    children: [],
  };
  if (a.depth >= MAX_DEPTH) return row;
  const child = (part: PathPart, label: string): VariableRow => {
    const schema = childSchema(a.schema, part);
    const example = pick(a.example, part) ?? schemaExample(schema);
    return buildRow({ ...a, label, path: [...a.path, part], schema, example, last: pick(a.last, part), depth: a.depth + 1 });
  };
  if (kind === 'object') row.children = childKeys(a.schema, a.example, a.last).map((k) => child(k, k));
  if (kind === 'list') {
    const sample = Array.isArray(a.last) ? a.last[0] : Array.isArray(a.example) ? a.example[0] : undefined;
    if (childSchema(a.schema, 0) || sample !== undefined) row.children = [child(0, '[0]')];
  }
  return row;
}

/** Node ids downstream of `nodeId` (offering them would create a cycle). */
export function descendants(graph: WorkflowGraph, nodeId: string): Set<string> {
  const out = new Set<string>();
  const walk = (id: string) => {
    for (const e of graph.edges) if (e.source === id && !out.has(e.target)) (out.add(e.target), walk(e.target));
  };
  walk(nodeId);
  return out;
}

export function ancestors(graph: WorkflowGraph, nodeId: string): Set<string> {
  const deps = graphDependencies(graph);
  const out = new Set<string>();
  const walk = (id: string) => {
    for (const d of deps.get(id) ?? []) if (!out.has(d)) (out.add(d), walk(d));
  };
  walk(nodeId);
  return out;
}

/** A file input's row: one whole `@file:<name>` value, with no parts to pick. */
function fileRow(name: string, label: string, expected: ValueKind, inText: boolean): VariableRow {
  const fit = inText ? { ok: false } : compatible(expected, 'file');
  return {
    key: fileRef(name),
    label,
    ref: fileRef(name),
    path: [],
    kind: 'file',
    hasLast: false,
    compatible: fit.ok,
    wholeOnly: true,
    ...(fit.ok || inText ? {} : { mismatch: { expected, actual: 'file' as ValueKind } }),
    children: [],
  };
}

/** The secrets group: one text row per name, no value, no children; only a tool node's arguments may use them. */
function secretRows(names: readonly string[], expected: ValueKind): VariableRow[] {
  const fit = compatible(expected, 'text');
  return names.map((name) => ({
    key: secretPlaceholder(name),
    label: name,
    ref: secretPlaceholder(name),
    path: [],
    kind: 'text' as ValueKind,
    hasLast: false,
    compatible: fit.ok,
    secret: true,
    ...(fit.ok ? {} : { mismatch: { expected, actual: 'text' as ValueKind } }),
    children: [],
  }));
}

/**
 * `inText`: the tree feeds an expression (placeholders inside text), where a file input cannot
 * appear; its row is shown but not pickable.
 */
export function variableTree(ctx: TreeContext, nodeId: string, expected: ValueKind, opts: { inText?: boolean } = {}): VariableGroup[] {
  const groups: VariableGroup[] = [];
  const fields = startNode(ctx.graph)?.data.fields ?? [];
  groups.push({
    id: 'inputs',
    label: 'inputs',
    connected: true,
    rows: fields.map((f) => {
      if (isFileBound(f)) return fileRow(f.name, f.label || f.name, expected, opts.inText === true);
      const schema = fieldSchema(f);
      const example = f.example ?? schemaExample(schema);
      return buildRow({ makeRef: (p) => inputRef(f.name, p), label: f.label || f.name, path: [], schema, example, last: undefined, hasLast: false, expected, depth: 0 });
    }),
  });
  const below = descendants(ctx.graph, nodeId);
  const self = ctx.graph.nodes.find((n) => n.id === nodeId);
  const loop = self ? parentOf(self) : undefined;
  // inside a body: the loop's item and index, and the loop's own prerequisites as connected
  if (loop) groups.push(loopGroup(ctx, loop, expected));
  const above = new Set([...ancestors(ctx.graph, nodeId), ...(loop ? ancestors(ctx.graph, loop) : [])]);
  for (const node of ctx.graph.nodes) {
    if (!isStepNode(node) || node.id === nodeId || below.has(node.id)) continue;
    // a body step sees its own body and the loop's prerequisites; outside, no body step is visible
    const level = parentOf(node);
    if (loop ? level !== loop && !(level === undefined && above.has(node.id)) : level !== undefined) continue;
    const entry = node.type === 'tool' ? ctx.tool(node.tool.name) : undefined;
    // a Human Input node's result is its form's values
    const schema = node.type === 'input' ? (node.data.form as JsonSchema) : outputSchemaOf(entry);
    const hasLast = ctx.lastResults?.has(node.id) ?? false;
    const last = ctx.lastResults?.get(node.id);
    const row = buildRow({
      makeRef: (p) => nodeRef(node.id, p),
      label: 'result',
      path: [],
      schema,
      example: schemaExample(schema),
      last,
      hasLast,
      expected,
      depth: 0,
    });
    groups.push({ id: node.id, nodeId: node.id, label: node.data.title || node.id, connected: above.has(node.id), rows: [row] });
  }
  if (self?.type === 'tool' && ctx.secretNames?.length) groups.push({ id: 'secrets', label: 'secrets', connected: true, rows: secretRows(ctx.secretNames, expected) });
  return groups;
}

/**
 * The `loop` group of a body step: `{{item}}` (sampled from the last run of the node the loop's
 * `items` references, when there is one) and `{{index}}` (a number).
 */
function loopGroup(ctx: TreeContext, loopId: string, expected: ValueKind): VariableGroup {
  const group = ctx.graph.nodes.find((n) => n.id === loopId);
  const items = group?.type === 'forEach' && typeof group.data.items === 'string' ? exactReference(group.data.items) : undefined;
  const source = items?.kind === 'node' ? items : undefined;
  const list = source && ctx.lastResults?.has(source.id) ? getPath(ctx.lastResults.get(source.id), source.path) : group?.type === 'forEach' ? group.data.items : undefined;
  const sample = Array.isArray(list) ? list[0] : undefined;
  const item = buildRow({ makeRef: (p) => `{{item${formatPath(p)}}}`, label: 'item', path: [], schema: undefined, example: sample, last: undefined, hasLast: false, expected, depth: 0 });
  const index = buildRow({ makeRef: () => '{{index}}', label: 'index', path: [], schema: { type: 'integer' }, example: 0, last: undefined, hasLast: false, expected, depth: 0 });
  return { id: 'loop', label: 'loop', connected: true, rows: [item, index] };
}

/** Flattens a tree (depth-first), for tests and keyboard navigation. */
export function flattenRows(rows: VariableRow[]): VariableRow[] {
  return rows.flatMap((r) => [r, ...flattenRows(r.children)]);
}
