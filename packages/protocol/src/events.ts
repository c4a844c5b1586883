import type { AgentPlan, RunStatus } from './plan';
import type { StepFailure } from './references';

/**
 * A step that failed while its `onError` (continue or branch) let the run go on: a completed
 * run's `complete` event and detail list these. `iteration`: a body step's iteration.
 */
export interface FailedStep {
  stepId: string;
  iteration?: number;
  error: StepFailure;
}

/**
 * Run events. Every state change of a run is one of these, appended to the run's
 * durable log; SSE frames are named after `type` and carry `runId`, `seq` and `ts`.
 */

/** The fields every run event carries, whatever its type. */
export interface EventBase {
  /** The run the event belongs to. */
  runId: string;
  /**
   * The event's position in the run's log: an integer starting at 1, one more for each event,
   * never reused. Clients resume a stream after the last `seq` they saw.
   */
  seq: number;
  /** When the event was appended: ISO 8601 UTC with milliseconds (`2026-01-31T12:00:00.000Z`). */
  ts: string;
}

/**
 * Fields of the events of a step inside a forEach body: `iteration` is the 0-based item index and
 * `parentStepId` the forEach step. `index` of such a step is its 1-based position in the body.
 */
export interface BodyStepFields {
  iteration?: number;
  parentStepId?: string;
}

/**
 * Each event type and its payload (the fields besides `EventBase` and `type`). Arguments in
 * events are redacted: fields a tool declares secret read `[redacted]`.
 */
export interface RunEventPayloads {
  /**
   * The run exists. `status` is its first status; `parentRunId` names the run it was forked
   * or rewound from; `origin` says how it was started (e.g. `api`, `workflow`, `task`,
   * `batch`, `fork`, `rewind`).
   */
  run_created: { goal?: string; status: RunStatus; parentRunId?: string; origin?: string };
  /** A chunk of the model's text while it drafts the plan. Not kept in a run's stored history view. */
  plan_token: { text: string };
  /**
   * The plan the run will execute, after validation: drafted by the model or supplied by the
   * caller. Plan review (when on) follows.
   */
  plan_ready: { plan: AgentPlan };
  /**
   * The run pauses for plan review until gate `gateId` is answered; `plan` is the plan to
   * review. `uncertainSteps`: steps whose tool may have taken effect before the host stopped
   * (resume).
   */
  plan_approval_requested: { gateId: string; plan: AgentPlan; uncertainSteps?: string[] };
  /** The plan gate `gateId` was approved; `edited` is true when the reviewer changed `plan`. */
  plan_approved: { gateId: string; edited: boolean; plan: AgentPlan };
  /**
   * A step started. `index` is its 1-based position in the plan; `attempt` counts from 1 (0 for
   * a pinned step, whose result is served without running the tool); `reused` marks a step
   * carried over from an earlier run.
   */
  step_start: { stepId: string; index: number; title?: string; tool?: string; arguments?: unknown; attempt: number; pinned?: boolean; reused?: boolean } & BodyStepFields & {
      /** A forEach step: how many iterations it will run. */
      total?: number;
    };
  /**
   * The run pauses before step `stepId` until gate `gateId` is answered; `reason` says why
   * (a rule, the permission mode, `requiresApproval`) and `effect` is the tool's effect.
   */
  step_approval_requested: { gateId: string; stepId: string; reason: string; tool?: string; arguments?: unknown; effect?: string };
  /**
   * The step gate `gateId` was approved; the step runs. A rejection has no event type of its
   * own: it is an `audit` event with `kind: 'step_rejected'` and the reason.
   */
  step_approved: { gateId: string; stepId: string };
  /**
   * The run waits at input step `stepId` (status `awaiting_input`) until gate `gateId` is answered
   * with values that satisfy `form` (`POST /api/agent/{runId}/input` or the inbox), or until
   * `expiresAt` (ISO-8601 UTC), when the step fails `gate_expired` or completes with its defaults.
   */
  input_requested: { gateId: string; stepId: string; title: string; form: Record<string, unknown>; expiresAt: string };
  /**
   * Input gate `gateId` was answered (`outcome: "answered"`) or timed out with its defaults
   * (`"defaulted"`); the step's `step_complete` carries the values as its result.
   */
  input_received: { gateId: string; stepId: string; outcome: 'answered' | 'defaulted' };
  /**
   * A tool call (`phase: 'call'`, with redacted `arguments`) or its outcome (`phase: 'result'`,
   * with `result` or `error`). `callId` pairs a call with its result (set for a chat model's calls).
   */
  tool: { phase: 'call' | 'result'; stepId?: string; name: string; arguments?: unknown; result?: unknown; error?: string; callId?: string } & BodyStepFields;
  /** An attempt failed with `error`; attempt number `attempt` (2 or more) starts after `delayMs` milliseconds. */
  step_retry: { stepId: string; attempt: number; delayMs: number; error: string };
  /**
   * A step ended: `done` (with `result`), `failed` (with `error`) or `skipped`. `attempts` is
   * how many attempts ran; `durationMs` the wall time in milliseconds (0 for a reused step).
   */
  step_complete: { stepId: string; index: number; status: 'done' | 'failed' | 'skipped'; result?: unknown; error?: string; attempts: number; durationMs: number; reused?: boolean } & BodyStepFields;
  /** A forEach step finished one more iteration: `done` of `total` iterations have ended. */
  loop_progress: { stepId: string; done: number; total: number; iteration: number };
  /**
   * Audit events: permission decisions, hook runs and other records that explain a run.
   * `kind` names the record; `decision`, `source`, `rule` and `reason` describe a permission
   * decision; further fields depend on `kind`.
   */
  audit: { kind: string; stepId?: string; tool?: string; decision?: string; source?: string; rule?: string; reason?: string; hook?: string; [k: string]: unknown };
  /** Someone asked to cancel the run; `cancelled` follows once running steps stop. */
  // biome-ignore lint/complexity/noBannedTypes: an event without payload
  cancel_requested: {};
  /**
   * A failed, cancelled or interrupted run was resumed: it pauses for plan review again.
   * `reusedSteps` are the steps whose earlier results are kept rather than run again.
   */
  resumed: { reusedSteps: string[] };
  /** The run completed: `result` is its final value, `summary` a short human text. Ends the stream. */
  complete: { result: unknown; summary: string; failedSteps?: FailedStep[] };
  /** The run failed: `message` in words, `code` a stable error code when known. Ends the stream. */
  error: { message: string; code?: string; details?: unknown };
  /** The run was cancelled. Ends the stream. */
  // biome-ignore lint/complexity/noBannedTypes: an event without payload
  cancelled: {};
  /** The host stopped while the run was live; `reason` says why. Ends the stream. */
  interrupted: { reason: string };
  /**
   * The host stopped while this step's tool was running, and the tool is neither read-only nor
   * idempotent: its effect may or may not have happened. A resume shows the step at the plan
   * review; it runs again only if the reviewer keeps it.
   */
  step_uncertain: { stepId: string; tool?: string; reason: string };
}

/**
 * The name of an event type (and of its SSE frame), e.g. `step_start`; lower snake case.
 */
export type RunEventType = keyof RunEventPayloads;

/** One event as stored and streamed: the common fields, its `type` and that type's payload. */
export type RunEvent<T extends RunEventType = RunEventType> = EventBase & { type: T } & RunEventPayloads[T];

/**
 * Events after which a stream ends: the run reached a terminal status (`complete`, `error`,
 * `cancelled`, `interrupted`); no event follows until a resume.
 */
export const STREAM_END_EVENTS: readonly RunEventType[] = ['complete', 'error', 'cancelled', 'interrupted'];
