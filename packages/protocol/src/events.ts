import type { AgentPlan, RunStatus } from './plan';
import type { StepFailure } from './references';

/**
 * A step that failed while its `onError` (continue or branch) let the run go on: a completed
 * run's `complete` event and detail list these. `iteration`: a body step's iteration.
 */
export interface FailedStep {
  /** The plan id of the step that failed. */
  stepId: string;
  /** A forEach body step: the 0-based iteration it failed in; absent for a top-level step. */
  iteration?: number;
  /** What went wrong: the step's error code, message and (when kept) the tool's result. */
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
  /** The 0-based index of the forEach item this event belongs to; absent outside a forEach body. */
  iteration?: number;
  /** The forEach step whose body holds this step; absent outside a forEach body. */
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
  run_created: {
    /** The goal the run was started with; absent when it ran a supplied plan or workflow without one. */
    goal?: string;
    /** The run's first status (`planning`, or `running` when the plan was supplied). */
    status: RunStatus;
    /** The run this one was forked, rewound or retried from; absent for a fresh run. */
    parentRunId?: string;
    /** How the run was started, e.g. `api`, `workflow`, `workflow-tool`, `task`, `batch`, `retry`, `fork`, `rewind`, `mcp`. */
    origin?: string;
  };
  /** A chunk of the model's text while it drafts the plan. Not kept in a run's stored history view. */
  plan_token: {
    /** The next piece of the model's draft text, in order. */
    text: string;
  };
  /**
   * The plan the run will execute, after validation: drafted by the model or supplied by the
   * caller. Plan review (when on) follows.
   */
  plan_ready: {
    /** The validated plan. */
    plan: AgentPlan;
  };
  /**
   * The run pauses for plan review until gate `gateId` is answered; `plan` is the plan to
   * review. `uncertainSteps`: steps whose tool may have taken effect before the host stopped
   * (resume).
   */
  plan_approval_requested: {
    /** The gate to answer (approve, edit or reject). */
    gateId: string;
    /** The plan to review. */
    plan: AgentPlan;
    /** After a resume: ids of steps whose tool may have taken effect before the host stopped. */
    uncertainSteps?: string[];
  };
  /** The plan gate `gateId` was approved; `edited` is true when the reviewer changed `plan`. */
  plan_approved: {
    /** The plan gate that was answered. */
    gateId: string;
    /** True when the reviewer approved a changed plan. */
    edited: boolean;
    /** The plan the run executes from here (the edited one when `edited`). */
    plan: AgentPlan;
  };
  /**
   * A step started. `index` is its 1-based position in the plan; `attempt` counts from 1 (0 for
   * a pinned step, whose result is served without running the tool); `reused` marks a step
   * carried over from an earlier run.
   */
  step_start: {
    /** The plan id of the step. */
    stepId: string;
    /** The step's 1-based position in the plan (in its forEach body for a body step). */
    index: number;
    /** The step's title from the plan, when it has one. */
    title?: string;
    /** The tool the step calls; absent for control-flow and input steps. */
    tool?: string;
    /** The resolved arguments, redacted; absent for a step that calls no tool or a pinned one. */
    arguments?: unknown;
    /** The attempt number, from 1; 0 for a pinned step. */
    attempt: number;
    /** True for a pinned step: its stored result is served without running the tool. */
    pinned?: boolean;
    /** True for a step carried over from an earlier run. */
    reused?: boolean;
  } & BodyStepFields & {
    /** A forEach step: how many iterations it will run. */
    total?: number;
  };
  /**
   * The run pauses before step `stepId` until gate `gateId` is answered; `reason` says why
   * (a rule, the permission mode, `requiresApproval`) and `effect` is the tool's effect.
   */
  step_approval_requested: {
    /** The gate to answer (approve or reject). */
    gateId: string;
    /** The step waiting for approval. */
    stepId: string;
    /** Why approval is needed, in words (the rule, the permission mode or `requiresApproval`). */
    reason: string;
    /** The tool the step would call. */
    tool?: string;
    /** The step's resolved arguments, redacted. */
    arguments?: unknown;
    /** The tool's effect: `read`, `write`, `external` or `command`. */
    effect?: string;
  };
  /**
   * The step gate `gateId` was approved; the step runs. A rejection has no event type of its
   * own: it is an `audit` event with `kind: 'step_rejected'` and the reason.
   */
  step_approved: {
    /** The step gate that was approved. */
    gateId: string;
    /** The step that now runs. */
    stepId: string;
  };
  /**
   * The run waits at input step `stepId` (status `awaiting_input`) until gate `gateId` is answered
   * with values that satisfy `form` (`POST /api/agent/{runId}/input` or the inbox), or until
   * `expiresAt` (ISO-8601 UTC), when the step fails `gate_expired` or completes with its defaults.
   */
  input_requested: {
    /** The gate to answer with the form's values. */
    gateId: string;
    /** The input step that waits. */
    stepId: string;
    /** The question shown to the person answering. */
    title: string;
    /** The JSON Schema (object) the answer must satisfy. */
    form: Record<string, unknown>;
    /** When the gate times out: ISO 8601 UTC. */
    expiresAt: string;
  };
  /**
   * Input gate `gateId` was answered (`outcome: "answered"`) or timed out with its defaults
   * (`"defaulted"`); the step's `step_complete` carries the values as its result.
   */
  input_received: {
    /** The input gate that was settled. */
    gateId: string;
    /** The input step that goes on. */
    stepId: string;
    /** `answered` by a person, or `defaulted` when it timed out and the form's defaults were used. */
    outcome: 'answered' | 'defaulted';
  };
  /**
   * A tool call (`phase: 'call'`, with redacted `arguments`) or its outcome (`phase: 'result'`,
   * with `result` or `error`). `callId` pairs a call with its result (set for a chat model's calls).
   */
  tool: {
    /** `call` before the tool runs, `result` after it returned or threw. */
    phase: 'call' | 'result';
    /** The step that made the call; absent for a chat model's call outside a plan. */
    stepId?: string;
    /** The tool's name. */
    name: string;
    /** The call's arguments, redacted (on `call`). */
    arguments?: unknown;
    /** What the tool returned (on a successful `result`). */
    result?: unknown;
    /** The error message (on a failed `result`). */
    error?: string;
    /** Pairs a call with its result; set for a chat model's calls. */
    callId?: string;
  } & BodyStepFields;
  /** An attempt failed with `error`; attempt number `attempt` (2 or more) starts after `delayMs` milliseconds. */
  step_retry: {
    /** The step that is retried. */
    stepId: string;
    /** The number of the attempt about to start (2 or more). */
    attempt: number;
    /** How long the host waits before it, in milliseconds. */
    delayMs: number;
    /** The failed attempt's error message. */
    error: string;
  };
  /**
   * A step ended: `done` (with `result`), `failed` (with `error`) or `skipped`. `attempts` is
   * how many attempts ran; `durationMs` the wall time in milliseconds (0 for a reused step).
   */
  step_complete: {
    /** The plan id of the step. */
    stepId: string;
    /** The step's 1-based position, as in its `step_start`. */
    index: number;
    /** How the step ended. */
    status: 'done' | 'failed' | 'skipped';
    /** The step's result (when `done`). */
    result?: unknown;
    /** The error message (when `failed`). */
    error?: string;
    /** How many attempts ran. */
    attempts: number;
    /** Wall time of the step in milliseconds; 0 for a reused step. */
    durationMs: number;
    /** True for a step carried over from an earlier run. */
    reused?: boolean;
  } & BodyStepFields;
  /** A forEach step finished one more iteration: `done` of `total` iterations have ended. */
  loop_progress: {
    /** The forEach step. */
    stepId: string;
    /** How many iterations have ended so far. */
    done: number;
    /** How many iterations the step runs in all. */
    total: number;
    /** The 0-based index of the iteration that just ended. */
    iteration: number;
  };
  /**
   * Audit events: permission decisions, hook runs and other records that explain a run.
   * `kind` names the record; `decision`, `source`, `rule` and `reason` describe a permission
   * decision; further fields depend on `kind`.
   */
  audit: {
    /** What is recorded, e.g. `permission`, `hook`, `progress`, `step_rejected`, `plan_rejected`, `gate_expired`. */
    kind: string;
    /** The step the record concerns, when it concerns one. */
    stepId?: string;
    /** The tool the record concerns, when it concerns one. */
    tool?: string;
    /** A permission decision: `allow`, `ask` or `deny`. */
    decision?: string;
    /** A permission decision: what decided it (`hook`, `deny`, `ask` or `allow` rules, `floor`, `mode`). */
    source?: string;
    /** A permission decision: the rule that matched, when one did. */
    rule?: string;
    /** Why, in words. */
    reason?: string;
    /** A hook record: the hook that ran. */
    hook?: string;
    [k: string]: unknown;
  };
  /** Someone asked to cancel the run; `cancelled` follows once running steps stop. */
  cancel_requested: {};
  /**
   * A failed, cancelled or interrupted run was resumed: it pauses for plan review again.
   * `reusedSteps` are the steps whose earlier results are kept rather than run again.
   */
  resumed: {
    /** Ids of the steps whose earlier results are kept. */
    reusedSteps: string[];
  };
  /** The run completed: `result` is its final value, `summary` a short human text. Ends the stream. */
  complete: {
    /** The run's final value. */
    result: unknown;
    /** A short human text about the outcome. */
    summary: string;
    /** Steps that failed while their `onError` let the run go on; absent when none did. */
    failedSteps?: FailedStep[];
  };
  /** The run failed: `message` in words, `code` a stable error code when known. Ends the stream. */
  error: {
    /** What went wrong, in words. */
    message: string;
    /** The stable error code, when the failure has one. */
    code?: string;
    /** The error's structured details (e.g. the list of plan problems), when it has any. */
    details?: unknown;
  };
  /** The run was cancelled. Ends the stream. */
  cancelled: {};
  /** The host stopped while the run was live; `reason` says why. Ends the stream. */
  interrupted: {
    /** Why, in words. */
    reason: string;
  };
  /**
   * The host stopped while this step's tool was running, and the tool is neither read-only nor
   * idempotent: its effect may or may not have happened. A resume shows the step at the plan
   * review; it runs again only if the reviewer keeps it.
   */
  step_uncertain: {
    /** The step whose effect is unknown. */
    stepId: string;
    /** The tool it was running. */
    tool?: string;
    /** Why, in words. */
    reason: string;
  };
}

/**
 * The name of an event type (and of its SSE frame), e.g. `step_start`; lower snake case.
 */
export type RunEventType = keyof RunEventPayloads;

/** One event as stored and streamed: the common fields, its `type` and that type's payload. */
export type RunEvent<T extends RunEventType = RunEventType> = EventBase & {
  /** The event type; the SSE frame carries this name. */
  type: T;
} & RunEventPayloads[T];

/**
 * Events after which a stream ends: the run reached a terminal status (`complete`, `error`,
 * `cancelled`, `interrupted`); no event follows until a resume.
 */
export const STREAM_END_EVENTS: readonly RunEventType[] = ['complete', 'error', 'cancelled', 'interrupted'];
