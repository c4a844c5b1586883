/**
 * Approval gates of one run. One gate is open at a time (the approve endpoint names no gate);
 * further requests queue in order (the queue lives in the run reducer's state). A gate resolves
 * to `approved`, `rejected` or `cancelled`.
 */

export type GateKind = 'plan' | 'step';
export type GateOutcome = { kind: 'approved'; plan?: unknown } | { kind: 'rejected'; reason: string } | { kind: 'cancelled' };

/** A gate as the run row and the approve reply show it. */
export interface OpenGate {
  id: string;
  kind: GateKind;
  stepId?: string;
  reason: string;
  detail?: Record<string, unknown>;
}
