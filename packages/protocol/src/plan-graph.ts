import { dependencyStep } from './control-flow';
import { fieldsToSchema } from './graph-fields';
import { BODY_HANDLE, type CompiledGraph, type GraphEdge, isStepNode, jsonCopy, parentOf, portOfHandle, type StepNode, startNode, type WorkflowGraph } from './graph-model';
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
 * Control flow (docs/workflows.md): a condition node compiles to `kind: "condition"` with its cases, an
 * edge from its port handle `port:<name>` to `dependsOn: ["<id>:<name>"]`; a forEach group
 * compiles to `kind: "forEach"` whose `steps` are the nodes inside it (`parentId`), in their own
 * reading order; edges from the group's inner start carry no dependency; `data.join: "any"`
 * becomes `join: "any"`; a Human Input node compiles to `kind: "input"` with its form, `onTimeout` and
 * `defaults` (its wait is the node's `timeoutMs`, as for every step). `planToGraph` (graph-layout.ts) is the inverse.
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
 * The `dependsOn` entry an edge stands for (`a`, or `a:<port>` from a port handle), or
 * undefined when it carries none: an end is not a step node (Start, a dangling end), or it
 * leaves a forEach group's inner start.
 */
function dependencyOf(e: GraphEdge, steps: ReadonlyMap<string, StepNode>): string | undefined {
  const source = steps.get(e.source);
  if (!source || !steps.has(e.target)) return undefined;
  if (source.type === 'forEach' && e.sourceHandle === BODY_HANDLE) return undefined;
  const port = portOfHandle(e.sourceHandle);
  return port ? `${e.source}:${port}` : e.source;
}

/**
 * The `dependsOn` entries of each step node, from the edges, in edge order: every step node has
 * an entry (empty when it has no upstream step); exact duplicates and edges carrying no
 * dependency (see `dependencyOf`) are ignored.
 */
export function graphDependsOn(graph: WorkflowGraph): Map<string, string[]> {
  const steps = new Map(graph.nodes.filter(isStepNode).map((n) => [n.id, n]));
  const deps = new Map<string, string[]>([...steps.keys()].map((id) => [id, []]));
  for (const e of graph.edges) {
    const entry = dependencyOf(e, steps);
    const list = deps.get(e.target);
    if (entry && list && !list.includes(entry)) list.push(entry);
  }
  return deps;
}

/**
 * Direct step dependencies of each step node (step ids, ports dropped, each once): every step
 * node has an entry (empty when it has no upstream step).
 */
export function graphDependencies(graph: WorkflowGraph): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [id, entries] of graphDependsOn(graph)) out.set(id, [...new Set(entries.map(dependencyStep))]);
  return out;
}

/**
 * The canvas' reading order of the step nodes at one level: the top level (no `parent`) or the
 * body of forEach group `parent`. A topological order that always takes the ready node first in
 * position order (left to right, then top to bottom, then id); dependencies on nodes of another
 * level are ignored; nodes caught in a cycle follow in position order. This order gives
 * `{{steps.N}}` its meaning (N is the 1-based position in it).
 */
export function orderStepNodes(graph: WorkflowGraph, parent?: string): StepNode[] {
  const nodes = graph.nodes.filter((n): n is StepNode => isStepNode(n) && parentOf(n) === parent).sort(byPosition);
  const level = new Set(nodes.map((n) => n.id));
  const deps = graphDependencies(graph);
  const done = new Set<string>();
  const out: StepNode[] = [];
  let progress = true;
  while (progress) {
    progress = false;
    const next = nodes.find((n) => !done.has(n.id) && (deps.get(n.id) ?? []).every((d) => done.has(d) || !level.has(d)));
    if (next) {
      done.add(next.id);
      out.push(next);
      progress = true;
    }
  }
  for (const n of nodes) if (!done.has(n.id)) out.push(n);
  return out;
}

/** The fields only one kind of node compiles: what it calls or decides or iterates. */
function kindFields(node: StepNode, body: () => PlanStep[]): Partial<PlanStep> {
  const d = node.data;
  const args = Object.keys(d.arguments ?? {}).length > 0 ? { arguments: jsonCopy(d.arguments) } : {};
  switch (node.type) {
    case 'tool':
      return { tool: node.tool.name, arguments: jsonCopy(d.arguments ?? {}) };
    case 'model':
      return { instruction: d.instruction ?? '', ...args };
    case 'condition':
      return { kind: 'condition', cases: jsonCopy(node.data.cases), ...(d.instruction !== undefined ? { instruction: d.instruction } : {}), ...args };
    case 'input': {
      const i = node.data;
      return { kind: 'input', form: jsonCopy(i.form), ...(i.onTimeout !== undefined ? { onTimeout: i.onTimeout } : {}), ...(i.defaults !== undefined ? { defaults: jsonCopy(i.defaults) } : {}), ...args };
    }
    case 'forEach': {
      const f = node.data;
      return { kind: 'forEach', items: jsonCopy(f.items), ...(f.concurrency !== undefined ? { concurrency: f.concurrency } : {}), ...(f.maxItems !== undefined ? { maxItems: f.maxItems } : {}), steps: body(), ...args };
    }
  }
}

/**
 * The plan step of one node, in canonical shape: an empty title, an empty `dependsOn`, a false
 * `requiresApproval`, a one-attempt retry, `join: "all"`, and the empty arguments of a model,
 * condition, forEach or input node are left out; a tool step always has `arguments`; a model step
 * always has an `instruction` (maybe empty); `kind` is written for conditions, forEach and inputs
 * only; `onError` and `timeoutMs` are written as the node holds them (`onError: "fail"` included).
 * Fields the canvas does not model (`data.extra`) come first; a modelled field wins.
 */
function stepOf(graph: WorkflowGraph, node: StepNode, deps: ReadonlyMap<string, string[]>): PlanStep {
  const d = node.data;
  const step: PlanStep = { ...(jsonCopy(d.extra) ?? {}), id: node.id };
  if (d.title) step.title = d.title;
  Object.assign(step, kindFields(node, () => levelSteps(graph, node.id, deps)));
  const dependsOn = deps.get(node.id) ?? [];
  if (dependsOn.length > 0) step.dependsOn = [...dependsOn];
  if (d.join === 'any') step.join = 'any';
  if (d.requiresApproval) step.requiresApproval = true;
  if (d.retry && d.retry.maxAttempts > 1) step.retry = { ...d.retry };
  if (d.onError !== undefined) step.onError = d.onError;
  if (d.timeoutMs !== undefined) step.timeoutMs = d.timeoutMs;
  if (d.pinned) step.pinned = { result: jsonCopy(d.pinned.result) };
  return step;
}

/** The plan steps of one level (top level, or a forEach body), in reading order. */
function levelSteps(graph: WorkflowGraph, parent: string | undefined, deps: ReadonlyMap<string, string[]>): PlanStep[] {
  return orderStepNodes(graph, parent).map((n) => stepOf(graph, n, deps));
}

/**
 * Compiles a graph: top-level step nodes in reading order become plan steps (a forEach group's
 * body nodes its `steps`), edges between steps become `dependsOn` (edges from Start carry none:
 * inputs are always available), the Start node's fields become the input schema. Notes, sizes
 * and per-argument source choices are not compiled.
 */
export function graphToPlan(graph: WorkflowGraph, goal?: string): CompiledGraph {
  const steps = levelSteps(graph, undefined, graphDependsOn(graph));
  const plan: AgentPlan = goal ? { goal, steps } : { steps };
  return { plan, inputSchema: fieldsToSchema(startNode(graph)?.data.fields ?? []) };
}
