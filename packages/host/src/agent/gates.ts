import type { AgentPlan } from '@fengyu/protocol';
import type { Trx } from '../events/event-log';

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

/** The run a gate belongs to, as the inbox records it. */
export interface GateRun {
  readonly id: string;
  readonly owner: string;
  readonly goal?: string;
  readonly plan?: AgentPlan;
}

/**
 * Where gates are recorded (the inbox): an opened gate is written in the transaction of its
 * `*_requested` event, its end in the transaction of its answer, expiry or cancel; listeners are
 * told only after that commit (`told`).
 */
export interface GateRecorder {
  opened(run: GateRun, gate: OpenGate, trx: Trx): Promise<void>;
  settled(gateId: string, outcome: 'answered' | 'expired' | 'cancelled', trx: Trx): Promise<void>;
  told(change: { added: string } | { removed: string; outcome: 'answered' | 'expired' | 'cancelled' }): void;
  /** The run ended (or its host stops): its items still pending are cancelled. */
  runEnded(runId: string): void;
}

/**
 * A run that holds a scheduler slot (a background task): while a gate waits it gives the slot
 * back (`parked`), and after the answer it continues only once it holds one again (`resumed`).
 */
export interface GateParking {
  parked(): void;
  resumed(): Promise<void>;
}

/** Asks the person of the outer call (a chat's approval card) instead of opening a gate. */
export type OuterApproval = (reason: string, detail: { tool: string; arguments: unknown; effect: string }) => Promise<boolean>;
