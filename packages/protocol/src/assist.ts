import type { GraphDiagnostic, GraphDiff } from './graph-check';
import type { WorkflowGraph } from './graph-model';

/** An edit proposal of the builder's AI panel, as the host sends it in a `proposal` frame and the panel shows it. */
export interface Proposal {
  proposalId: string;
  /** `replace`: a whole new graph; `edit`: changes to the canvas the turn was sent with. */
  mode: 'replace' | 'edit';
  summary: string;
  graph: WorkflowGraph;
  diff: GraphDiff;
  problems: Array<GraphDiagnostic & { message: string }>;
  /** What the proposal was made against: the snapshot's fingerprint and revision. */
  base: { fingerprint: string; workflowId?: string; revision?: number };
}
