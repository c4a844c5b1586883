import type { GraphDiagnostic, GraphDiff } from './graph-check';
import type { WorkflowGraph } from './graph-model';

/** An edit proposal of the builder's AI panel, as the host sends it in a `proposal` frame and the panel shows it. */
export interface Proposal {
  /** The proposal's id, as the model's tool result names it. */
  proposalId: string;
  /** `replace`: a whole new graph; `edit`: changes to the canvas the turn was sent with. */
  mode: 'replace' | 'edit';
  /** One sentence from the model for the user: what the proposal changes (empty when it gave none). */
  summary: string;
  /** The whole graph as it would be once applied. */
  graph: WorkflowGraph;
  /** What changes against the canvas the turn was sent with (never empty). */
  diff: GraphDiff;
  /** The proposed graph's problems, each with its message in words; empty when it checks clean. */
  problems: Array<
    GraphDiagnostic & {
      /** The problem in words. */
      message: string;
    }
  >;
  /** What the proposal was made against: the snapshot's fingerprint and revision. */
  base: {
    /** The fingerprint of the canvas graph the turn was sent with. */
    fingerprint: string;
    /** The saved workflow the canvas belongs to; absent for a flow not saved yet. */
    workflowId?: string;
    /** That workflow's revision; absent for a flow not saved yet. */
    revision?: number;
  };
}
