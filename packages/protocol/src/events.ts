import type { AgentPlan, RunStatus } from './plan';

/**
 * Run events. Every state change of a run is one of these, appended to the run's
 * durable log; SSE frames are named after `type` and carry `runId`, `seq` and `ts`.
 */

export interface EventBase {
  runId: string;
  seq: number;
  ts: string;
}

export interface RunEventPayloads {
  run_created: { goal?: string; status: RunStatus; parentRunId?: string; origin?: string };
  plan_token: { text: string };
  plan_ready: { plan: AgentPlan };
  /** `uncertainSteps`: steps whose tool may have taken effect before the host stopped (resume). */
  plan_approval_requested: { gateId: string; plan: AgentPlan; uncertainSteps?: string[] };
  plan_approved: { gateId: string; edited: boolean; plan: AgentPlan };
  step_start: { stepId: string; index: number; title?: string; tool?: string; arguments?: unknown; attempt: number; pinned?: boolean; reused?: boolean };
  step_approval_requested: { gateId: string; stepId: string; reason: string; tool?: string; arguments?: unknown; effect?: string };
  step_approved: { gateId: string; stepId: string };
  tool: { phase: 'call' | 'result'; stepId?: string; name: string; arguments?: unknown; result?: unknown; error?: string; callId?: string };
  step_retry: { stepId: string; attempt: number; delayMs: number; error: string };
  step_complete: { stepId: string; index: number; status: 'done' | 'failed' | 'skipped'; result?: unknown; error?: string; attempts: number; durationMs: number; reused?: boolean };
  /** Audit events: permission decisions, hook runs and other records that explain a run. */
  audit: { kind: string; stepId?: string; tool?: string; decision?: string; source?: string; rule?: string; reason?: string; hook?: string; [k: string]: unknown };
  // biome-ignore lint/complexity/noBannedTypes: an event without payload
  cancel_requested: {};
  /** A failed, cancelled or interrupted run was resumed: it pauses for plan review again. */
  resumed: { reusedSteps: string[] };
  complete: { result: unknown; summary: string };
  error: { message: string; code?: string; details?: unknown };
  // biome-ignore lint/complexity/noBannedTypes: an event without payload
  cancelled: {};
  interrupted: { reason: string };
  /**
   * The host stopped while this step's tool was running, and the tool is neither read-only nor
   * idempotent: its effect may or may not have happened. A resume shows the step at the plan
   * review; it runs again only if the reviewer keeps it.
   */
  step_uncertain: { stepId: string; tool?: string; reason: string };
}

export type RunEventType = keyof RunEventPayloads;

export type RunEvent<T extends RunEventType = RunEventType> = EventBase & { type: T } & RunEventPayloads[T];

/** Events after which a stream ends. */
export const STREAM_END_EVENTS: readonly RunEventType[] = ['complete', 'error', 'cancelled', 'interrupted'];
