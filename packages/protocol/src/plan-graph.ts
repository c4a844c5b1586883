import type { JsonSchema } from './catalog';
import { fieldsToSchema, schemaToFields } from './graph-fields';
import {
  type CompiledGraph,
  emptyGraph,
  GRAPH_COLUMN_WIDTH,
  GRAPH_ROW_HEIGHT,
  type GraphEdge,
  type GraphLayout,
  isStepNode,
  jsonCopy,
  START_ID,
  START_POSITION,
  type StartNode,
  type StepData,
  type StepNode,
  startNode,
  type WorkflowGraph,
} from './graph-model';
import type { AgentPlan, PlanStep } from './plan';

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
