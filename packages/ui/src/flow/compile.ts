import { jsonClone } from './json-clone';
import type { AgentPlan, JsonSchema, PlanStep } from '@fengyu/protocol';
import {
  emptyGraph,
  GRAPH_VERSION,
  type GraphEdge,
  type GraphNode,
  isStepNode,
  START_ID,
  type StepNode,
  startNode,
  type WorkflowGraph,
} from './graph';
import { fieldsToSchema, schemaToFields } from './start-fields';

/**
 * The canvas compiler: a WorkflowGraph becomes the AgentPlan the host runs plus the
 * workflow's input schema (from the Start node). Edges between steps compile to `dependsOn`;
 * edges from Start carry no dependency (inputs are always available). Steps are ordered
 * topologically (ties by canvas position), so `steps.N` numbering follows the flow's reading order.
 * `decompile` rebuilds a laid-out graph from a plan, for definitions saved without a graph.
 */

export interface Compiled {
  plan: AgentPlan;
  inputSchema: JsonSchema;
}

function byPosition(a: StepNode, b: StepNode): number {
  return a.position.x - b.position.x || a.position.y - b.position.y || a.id.localeCompare(b.id);
}

/** Direct step dependencies of each step node, from the edges (deduplicated, Start excluded). */
export function dependencies(graph: WorkflowGraph): Map<string, string[]> {
  const steps = new Set(graph.nodes.filter(isStepNode).map((n) => n.id));
  const deps = new Map<string, string[]>([...steps].map((id) => [id, []]));
  for (const e of graph.edges) {
    if (!steps.has(e.target) || !steps.has(e.source)) continue;
    const list = deps.get(e.target) as string[];
    if (!list.includes(e.source)) list.push(e.source);
  }
  return deps;
}

/** Kahn's order with position tie-breaks; nodes caught in a cycle keep position order at the end. */
export function orderSteps(graph: WorkflowGraph): StepNode[] {
  const nodes = graph.nodes.filter(isStepNode).sort(byPosition);
  const deps = dependencies(graph);
  const done = new Set<string>();
  const out: StepNode[] = [];
  let progress = true;
  while (progress) {
    progress = false;
    for (const n of nodes) {
      if (done.has(n.id)) continue;
      if ((deps.get(n.id) ?? []).every((d) => done.has(d))) {
        done.add(n.id);
        out.push(n);
        progress = true;
        break;
      }
    }
  }
  for (const n of nodes) if (!done.has(n.id)) out.push(n);
  return out;
}

function compileStep(node: StepNode, dependsOn: string[]): PlanStep {
  const d = node.data;
  const step: PlanStep = { id: node.id };
  if (d.title) step.title = d.title;
  if (node.type === 'tool') step.tool = node.tool.name;
  if (node.type === 'model') step.instruction = d.instruction ?? '';
  if (node.type === 'tool' || Object.keys(d.arguments ?? {}).length > 0) step.arguments = jsonClone(d.arguments ?? {});
  if (dependsOn.length > 0) step.dependsOn = [...dependsOn];
  if (d.requiresApproval) step.requiresApproval = true;
  if (d.retry && d.retry.maxAttempts > 1) step.retry = { ...d.retry };
  if (d.pinned) step.pinned = { result: jsonClone(d.pinned.result) };
  return step;
}

export function compile(graph: WorkflowGraph, goal?: string): Compiled {
  const deps = dependencies(graph);
  const steps = orderSteps(graph).map((n) => compileStep(n, deps.get(n.id) ?? []));
  const start = startNode(graph);
  const plan: AgentPlan = goal ? { goal, steps } : { steps };
  return { plan, inputSchema: fieldsToSchema(start?.data.fields ?? []) };
}

const COLUMN = 300;
const ROW = 160;

/** Builds a graph from a plan (layout by dependency depth), e.g. for a template without a graph. */
export function decompile(plan: AgentPlan, inputSchema?: JsonSchema): WorkflowGraph {
  const graph = emptyGraph();
  const start = startNode(graph) as Extract<GraphNode, { type: 'start' }>;
  start.data.fields = schemaToFields(inputSchema);
  const depth = new Map<string, number>();
  const ids = new Set(plan.steps.map((s) => s.id));
  const depthOf = (id: string, seen: Set<string>): number => {
    const known = depth.get(id);
    if (known !== undefined) return known;
    const step = plan.steps.find((s) => s.id === id);
    const parents = (step?.dependsOn ?? []).filter((d) => ids.has(d) && !seen.has(d));
    const value = parents.length === 0 ? 1 : 1 + Math.max(...parents.map((p) => depthOf(p, new Set([...seen, id]))));
    depth.set(id, value);
    return value;
  };
  const rows = new Map<number, number>();
  for (const step of plan.steps) {
    const col = depthOf(step.id, new Set([step.id]));
    const row = rows.get(col) ?? 0;
    rows.set(col, row + 1);
    const position = { x: start.position.x + col * COLUMN, y: start.position.y + row * ROW };
    const data = {
      ...(step.title ? { title: step.title } : {}),
      arguments: jsonClone(step.arguments ?? {}),
      ...(step.instruction !== undefined && !step.tool ? { instruction: step.instruction } : {}),
      ...(step.requiresApproval ? { requiresApproval: true } : {}),
      ...(step.retry ? { retry: { ...step.retry } } : {}),
      ...(step.pinned ? { pinned: { result: jsonClone(step.pinned.result) } } : {}),
    };
    graph.nodes.push(
      step.tool
        ? { id: step.id, type: 'tool', tool: { name: step.tool }, position, data }
        : { id: step.id, type: 'model', position, data },
    );
    const parents = step.dependsOn ?? [];
    if (parents.length === 0) graph.edges.push(edge(START_ID, step.id));
    for (const p of parents) graph.edges.push(edge(p, step.id));
  }
  graph.version = GRAPH_VERSION;
  return graph;
}

function edge(source: string, target: string): GraphEdge {
  return { id: `e_${source}_${target}`, source, target };
}
