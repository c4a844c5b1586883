import { type AgentPlan, type JsonSchema, jsonCopy, parseGraph, planToGraph, type WorkflowDiff, type WorkflowGraph } from '@fengyu/protocol';
import type { DiffMark, DiffView } from './ai-panel';

/**
 * Two versions of a flow side by side: each side's graph with the host's diff marked on it —
 * removed and changed nodes on the older side, added and changed nodes on the newer one. Node
 * ids are step ids, so the diff's step ids name the nodes. Pure.
 */

/** What the host answers for one side: a saved graph (maybe none) and the content it came from. */
export interface SideContent {
  graph: Record<string, unknown> | null | undefined;
  plan: AgentPlan;
  inputSchema: JsonSchema;
  layout?: Record<string, { x: number; y: number }> | null;
}

/** The side's graph: the saved one, or one rebuilt from its plan when none was saved. */
export function sideGraph(side: SideContent): WorkflowGraph {
  return (side.graph ? parseGraph(jsonCopy(side.graph)) : undefined) ?? planToGraph(side.plan, side.inputSchema, side.layout ?? null);
}

function marked(graph: WorkflowGraph, marks: Array<[readonly string[], DiffMark]>): DiffView {
  const nodes: Record<string, DiffMark> = {};
  for (const [ids, mark] of marks) for (const id of ids) if (graph.nodes.some((n) => n.id === id)) nodes[id] = mark;
  return { graph, nodes, edges: {} };
}

/** The older side (`from`) and the newer side (`to`) as diff views. */
export function compareViews(from: WorkflowGraph, to: WorkflowGraph, diff: WorkflowDiff): { left: DiffView; right: DiffView } {
  const changed = diff.steps.changed.map((c) => c.id);
  return {
    left: marked(from, [
      [diff.steps.removed, 'removed'],
      [changed, 'changed'],
    ]),
    right: marked(to, [
      [diff.steps.added, 'added'],
      [changed, 'changed'],
    ]),
  };
}

/** True when the diff finds nothing changed in steps or inputs. */
export function isSame(diff: WorkflowDiff): boolean {
  const { steps, inputs } = diff;
  return steps.added.length + steps.removed.length + steps.changed.length + inputs.added.length + inputs.removed.length + inputs.changed.length === 0;
}
