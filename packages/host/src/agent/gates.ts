import type { AgentPlan } from '@fengyu/protocol';
import type Database from 'better-sqlite3';
import type { Trx } from '../events/event-log';

/**
 * Gates of one run: approvals (plan, step) and input steps' forms. One gate is open at a time (the
 * approve and input endpoints name no gate); further requests queue in order (the queue lives in
 * the run reducer's state). A gate resolves to `approved`, `rejected` or `cancelled`; an input gate
 * to `values` (answered, or its defaults on timeout) or `rejected` (it expired).
 */

export type GateKind = 'plan' | 'step' | 'input';
export type GateOutcome =
  | { kind: 'approved'; plan?: unknown }
  | { kind: 'rejected'; reason: string }
  | { kind: 'cancelled' }
  | { kind: 'values'; values: Record<string, unknown>; how: 'answered' | 'defaulted' };

/** An input step's answer as kept on the run row until the step commits (`runs.input_answer`). */
export type InputAnswer = { stepId: string; outcome: Extract<GateOutcome, { kind: 'values' }> };

/** The run row's text of an input step's answer (its values and how they came). */
export function inputAnswerText(stepId: string, outcome: Extract<GateOutcome, { kind: 'values' }>): string {
  return JSON.stringify({ stepId, values: outcome.values, how: outcome.how });
}

/** The answer a run row keeps for an input step not yet committed; undefined when none (or unreadable). */
export function inputAnswerOf(text: string | null | undefined): InputAnswer | undefined {
  if (!text) return undefined;
  try {
    const a = JSON.parse(text) as { stepId?: unknown; values?: unknown; how?: unknown };
    if (typeof a.stepId !== 'string' || !a.values || typeof a.values !== 'object' || Array.isArray(a.values)) return undefined;
    return { stepId: a.stepId, outcome: { kind: 'values', values: a.values as Record<string, unknown>, how: a.how === 'defaulted' ? 'defaulted' : 'answered' } };
  } catch {
    return undefined;
  }
}

/** What an input gate asks (kept in the run row's gate, so a parked run still knows it). */
export interface InputRequest {
  title: string;
  form: Record<string, unknown>;
  timeoutMs: number;
  onTimeout: 'fail' | 'default';
  defaults?: Record<string, unknown>;
  /** ISO-8601 UTC; set when the gate opens (a queued gate's wait starts then), `expiresAt` `timeoutMs` later. */
  openedAt?: string;
  expiresAt?: string;
}

/** A gate as the run row and the approve reply show it. */
export interface OpenGate {
  id: string;
  kind: GateKind;
  stepId?: string;
  reason: string;
  detail?: Record<string, unknown>;
  /** An input gate's form and timeout. */
  input?: InputRequest;
}

/** A write of another table in a run's commit: through Kysely, and (`raw`) as prepared statements when it has that form. */
export type AlsoWrite = ((trx: Trx) => Promise<void>) & { raw?: (raw: Database.Database) => void };

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
  /** The same as statements of a synchronous SQLite transaction (a commit written without Kysely). */
  settledRaw?(gateId: string, outcome: 'answered' | 'expired' | 'cancelled'): (raw: Database.Database) => void;
  told(change: { added: string } | { removed: string; outcome: 'answered' | 'expired' | 'cancelled' }): void;
  /** The run ended (or its host stops): its items still pending are cancelled. */
  runEnded(runId: string): void;
}

/**
 * A run that holds a scheduler slot (a background task): while a gate waits it gives the slot
 * back (`parked`, told the run's id once the gate's commit is written), and after the answer it
 * continues only once it holds one again (`resumed`).
 */
export interface GateParking {
  parked(runId: string): void;
  resumed(): Promise<void>;
}

/** Asks the person of the outer call (a chat's approval card) instead of opening a gate. */
export type OuterApproval = (reason: string, detail: { tool: string; arguments: unknown; effect: string }) => Promise<boolean>;
