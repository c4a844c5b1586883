import type { JsonSchema } from './catalog';
import { type ConditionCase, parseDependency, stepKind } from './control-flow';
import { schemaToFields } from './graph-fields';
import {
  BODY_HANDLE,
  emptyGraph,
  GRAPH_COLUMN_WIDTH,
  GRAPH_ROW_HEIGHT,
  GROUP_SIZE,
  type GraphEdge,
  type GraphLayout,
  type GraphNode,
  type GraphPosition,
  jsonCopy,
  PORT_HANDLE_PREFIX,
  START_ID,
  START_POSITION,
  type StartNode,
  type StepData,
  startNode,
  type WorkflowGraph,
} from './graph-model';
import type { AgentPlan, PlanStep } from './plan';

/**
 * plan → graph: the inverse of `graphToPlan` (plan-graph.ts), for definitions saved without a
 * graph, templates and the AI authoring tools. Steps are laid out in dependency columns; a
 * forEach becomes a group sized to hold its body, laid out the same way inside it. Pure.
 */

/** Where the first body column sits inside a group (right of the group's inner start). */
export const BODY_ORIGIN: Readonly<GraphPosition> = { x: 110, y: 60 };

/** What one placed step occupies, in columns and rows of the layout grid. */
interface Footprint {
  columns: number;
  rows: number;
}

/** A forEach group's size for a body laid out in `cols` columns and `rows` rows (never below `GROUP_SIZE`). */
function groupSize(cols: number, rows: number): { width: number; height: number } {
  return { width: Math.max(GROUP_SIZE.width, BODY_ORIGIN.x + cols * GRAPH_COLUMN_WIDTH), height: Math.max(GROUP_SIZE.height, BODY_ORIGIN.y + rows * GRAPH_ROW_HEIGHT) };
}

/** The grid cells a size covers (a node is one cell; a group as many as its size needs, plus a gap). */
function footprintOf(size: { width: number; height: number } | undefined): Footprint {
  if (!size) return { columns: 1, rows: 1 };
  return { columns: Math.ceil((size.width + 60) / GRAPH_COLUMN_WIDTH), rows: Math.ceil((size.height + 20) / GRAPH_ROW_HEIGHT) };
}

/**
 * Grid cells (column from 1, row from 0) for one level's steps, keeping plan order: a step sits
 * right of every cell of each dependency on this level and never left of the step before it;
 * within a column, rows fill downwards and a wide group reserves its rows in every column it
 * covers. Sorted by position, the nodes then read in plan order, so `graphToPlan` gives the
 * steps back in the same order (and `{{steps.N}}` keeps its meaning).
 */
function cells(steps: readonly PlanStep[], footprint: (s: PlanStep) => Footprint): Map<string, { col: number; row: number }> {
  const out = new Map<string, { col: number; row: number }>();
  const spans = new Map<string, Footprint>();
  const used = new Map<number, number>();
  let previous = 1;
  for (const step of steps) {
    const size = footprint(step);
    let col = previous;
    for (const d of step.dependsOn ?? []) {
      const id = parseDependency(d).stepId;
      const at = out.get(id);
      if (at) col = Math.max(col, at.col + (spans.get(id)?.columns ?? 1));
    }
    let row = 0;
    for (let c = col; c < col + size.columns; c++) row = Math.max(row, used.get(c) ?? 0);
    for (let c = col; c < col + size.columns; c++) used.set(c, row + size.rows);
    out.set(step.id, { col, row });
    spans.set(step.id, size);
    previous = col;
  }
  return out;
}

/** The step fields a graph node models; any other field travels in `data.extra`. */
const MODELLED_STEP_KEYS = new Set(['id', 'title', 'kind', 'tool', 'arguments', 'instruction', 'dependsOn', 'join', 'cases', 'items', 'concurrency', 'maxItems', 'steps', 'requiresApproval', 'retry', 'pinned', 'onError', 'timeoutMs', 'form', 'onTimeout', 'defaults']);

/** The fields of a step the canvas does not model, or undefined when it has none. */
function extraOf(step: PlanStep): Record<string, unknown> | undefined {
  const extra = Object.fromEntries(Object.entries(step).filter(([k, v]) => !MODELLED_STEP_KEYS.has(k) && v !== undefined));
  return Object.keys(extra).length > 0 ? jsonCopy(extra) : undefined;
}

/** The graph node of one step (without position); a forEach's body is added separately. */
function nodeOf(step: PlanStep, position: GraphPosition, size?: { width: number; height: number }): GraphNode {
  const extra = extraOf(step);
  const data: StepData = {
    ...(extra ? { extra } : {}),
    ...(step.title ? { title: step.title } : {}),
    arguments: jsonCopy(step.arguments ?? {}),
    ...(step.instruction !== undefined && !step.tool ? { instruction: step.instruction } : {}),
    ...(step.requiresApproval ? { requiresApproval: true } : {}),
    ...(step.retry ? { retry: { ...step.retry } } : {}),
    ...(step.pinned ? { pinned: { result: jsonCopy(step.pinned.result) } } : {}),
    ...(step.join === 'any' ? { join: 'any' as const } : {}),
    ...(step.onError !== undefined ? { onError: step.onError } : {}),
    ...(step.timeoutMs !== undefined ? { timeoutMs: step.timeoutMs } : {}),
  };
  const { id } = step;
  switch (stepKind(step)) {
    case 'condition':
      return { id, type: 'condition', position, data: { ...data, cases: jsonCopy(step.cases ?? []) as ConditionCase[] } };
    case 'input':
      return {
        id,
        type: 'input',
        position,
        data: { ...data, form: jsonCopy(step.form ?? { type: 'object', properties: {} }), ...(step.onTimeout === 'fail' || step.onTimeout === 'default' ? { onTimeout: step.onTimeout } : {}), ...(step.defaults !== undefined ? { defaults: jsonCopy(step.defaults) } : {}) },
      };
    case 'forEach': {
      const loop = { items: jsonCopy(step.items), ...(step.concurrency !== undefined ? { concurrency: step.concurrency } : {}), ...(step.maxItems !== undefined ? { maxItems: step.maxItems } : {}) };
      return { id, type: 'forEach', position, data: { ...data, ...loop, ...(size ?? {}) } };
    }
    default:
      return step.tool ? { id, type: 'tool', tool: { name: step.tool }, position, data } : { id, type: 'model', position, data };
  }
}

/** The edges of one step's dependencies (a port entry from the port's handle), or one edge from `root` when it has none. */
function edgesOf(step: PlanStep, root: { source: string; sourceHandle?: string }, add: (e: Omit<GraphEdge, 'id'>) => void): void {
  const deps = step.dependsOn ?? [];
  if (deps.length === 0) add({ source: root.source, target: step.id, ...(root.sourceHandle ? { sourceHandle: root.sourceHandle } : {}) });
  for (const entry of deps) {
    const { stepId, port } = parseDependency(entry);
    add({ source: stepId, target: step.id, ...(port !== undefined ? { sourceHandle: `${PORT_HANDLE_PREFIX}${port}` } : {}) });
  }
}

/** Lays out a forEach body inside its group: positions relative to the group, and the group's size. */
function layoutBody(body: readonly PlanStep[], layout: GraphLayout | null | undefined): { positions: Map<string, GraphPosition>; size: { width: number; height: number } } {
  const at = cells(body, () => ({ columns: 1, rows: 1 }));
  let cols = 1;
  let rows = 1;
  const positions = new Map<string, GraphPosition>();
  for (const s of body) {
    const c = at.get(s.id) ?? { col: 1, row: 0 };
    cols = Math.max(cols, c.col);
    rows = Math.max(rows, c.row + 1);
    const saved = layout?.[s.id];
    positions.set(s.id, saved ? { x: saved.x, y: saved.y } : { x: BODY_ORIGIN.x + (c.col - 1) * GRAPH_COLUMN_WIDTH, y: BODY_ORIGIN.y + c.row * GRAPH_ROW_HEIGHT });
  }
  return { positions, size: groupSize(cols, rows) };
}

/**
 * Builds a laid-out graph from a plan and its input schema: a Start node with the inputs, one
 * node per step (a forEach as a group holding its body's nodes), an edge per dependency (from
 * the port's handle for a port), one from Start to each top-level root step and one from a
 * group's inner start to each root of its body. Positions from `layout` (by node id; relative
 * to the group for body steps) win over the computed ones.
 */
export function planToGraph(plan: AgentPlan, inputSchema?: JsonSchema, layout?: GraphLayout | null): WorkflowGraph {
  const graph = emptyGraph();
  const start = startNode(graph) as StartNode;
  start.data.fields = schemaToFields(inputSchema);
  if (layout?.[START_ID]) start.position = { ...layout[START_ID] };
  const taken = new Set<string>();
  const add = (e: Omit<GraphEdge, 'id'>) => {
    let id = `e_${e.source}_${e.target}`;
    for (let i = 2; taken.has(id); i++) id = `e_${e.source}_${e.target}_${i}`;
    taken.add(id);
    graph.edges.push({ id, ...e });
  };
  const bodies = new Map(plan.steps.filter((s) => stepKind(s) === 'forEach').map((s) => [s.id, layoutBody(s.steps ?? [], layout)]));
  const at = cells(plan.steps, (s) => footprintOf(bodies.get(s.id)?.size));
  for (const step of plan.steps) {
    const c = at.get(step.id) ?? { col: 1, row: 0 };
    const saved = layout?.[step.id];
    const position = saved ? { x: saved.x, y: saved.y } : { x: START_POSITION.x + c.col * GRAPH_COLUMN_WIDTH, y: START_POSITION.y + c.row * GRAPH_ROW_HEIGHT };
    const body = bodies.get(step.id);
    graph.nodes.push(nodeOf(step, position, body?.size));
    edgesOf(step, { source: START_ID }, add);
    for (const inner of body ? (step.steps ?? []) : []) {
      const node = nodeOf(inner, body?.positions.get(inner.id) ?? { ...BODY_ORIGIN });
      if (node.type !== 'start' && node.type !== 'forEach') node.parentId = step.id;
      graph.nodes.push(node);
      edgesOf(inner, { source: step.id, sourceHandle: BODY_HANDLE }, add);
    }
  }
  return graph;
}
