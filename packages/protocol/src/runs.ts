import type { FailedStep, RunEvent } from './events';
import type { AgentPlan, RunStatus } from './plan';

export type { FailedStep } from './events';

/** Run history as the API answers it (the host and the UI share these shapes). */

/** One step's execution record. */
export interface StepExecution {
  /** The plan id of the step. */
  stepId: string;
  /** `uncertain`: the host stopped while its non-idempotent tool ran (it may have taken effect). */
  status: 'running' | 'done' | 'failed' | 'uncertain' | 'skipped';
  /** A step inside a forEach body: the iteration (0-based item index) and the forEach step. */
  iteration?: number;
  /** The forEach step whose body holds this step; absent for a top-level step. */
  parentStepId?: string;
  /** How many attempts ran (0 for a pinned step). */
  attempts: number;
  /** The step's result, once it is `done`. */
  result?: unknown;
  /** The error message, once it `failed`. */
  error?: string;
  /** When it started (ISO-8601 UTC). */
  startedAt?: string;
  /** When it ended (ISO-8601 UTC); absent while it runs. */
  finishedAt?: string;
  /** Its wall time in milliseconds; absent while it runs. */
  durationMs?: number;
  /** A digest of what the step does (tool, arguments, instruction): a resumed or rewound run reuses a done step whose fingerprint is unchanged. */
  fingerprint?: string;
  /** The result was carried over from an earlier run (resume, rewind) instead of run again. */
  reused: boolean;
}

/** A run in the history list. */
export interface RunListItem {
  /** The run's id. */
  id: string;
  /** The goal it was started with (inputs filled in); null when it had none. */
  goal: string | null;
  /** Where the run is now. */
  status: RunStatus;
  /** A short human text about the outcome; null until the run ends. */
  summary: string | null;
  /** Why it failed or was interrupted, in words; null otherwise. */
  error: string | null;
  /** How it was started (`api`, `workflow`, `task`, `retry`, `fork`, `rewind`, …). */
  origin: string;
  /** The run it was forked, rewound or retried from; null for a fresh run. */
  parentRunId: string | null;
  /** The workflow it runs; null for a goal or plan run. */
  workflowId: string | null;
  /** The workflow version it runs; null for a goal or plan run. */
  workflowVersion: number | null;
  /** How many top-level steps its plan has; 0 before it has a plan. */
  stepCount: number;
  /** When it was created (ISO-8601 UTC). */
  createdAt: string;
  /** When it last changed (ISO-8601 UTC). */
  updatedAt: string;
  /** When it ended (ISO-8601 UTC); null while it is live. */
  finishedAt: string | null;
}

/** A run's detail: the list item, its plan (secrets redacted), settings, executions and event log. */
export interface RunDetail extends RunListItem {
  /** The plan it executes, secrets redacted; null before the plan is ready. */
  plan: AgentPlan | null;
  /** Its settings: `permissionMode`, `planApproval`, `stepApproval`, `capabilityMode`, `backend`, `model`. */
  config: Record<string, unknown>;
  /** The inputs it was started with. */
  inputs: Record<string, unknown>;
  /** Its final value; null until it completes. */
  result: unknown;
  /** The gate it waits at (id, kind, step, reason, an input gate's form); null when it waits at none. */
  gate: unknown;
  /** The plugin sandbox posture when it was created: `mode` (`sandboxed` or `unsandboxed`) and `backend` (`bwrap`, `none`). */
  sandbox: {
    /** `sandboxed` or `unsandboxed`. */
    mode?: string;
    /** The sandbox backend (`bwrap`), or `none`. */
    backend?: string;
  } | null;
  /** One record per step execution (per iteration for a forEach body). */
  executions: StepExecution[];
  /** A completed run's failures that `onError` went past (absent when there were none). */
  failedSteps?: FailedStep[];
  /** The run's event log, without the plan's token stream. */
  events: RunEvent[];
  /** A failed run's error workflow, when its workflow names one (absent otherwise). */
  errorWorkflow?: ErrorWorkflowStart;
}

/**
 * The error workflow a failed run started: `pending` (not submitted yet), `submitted` (its task
 * `taskId`; `runId` once the task's run started) or `failed` (it could not be started: `error`).
 */
export interface ErrorWorkflowStart {
  /** The error workflow the failed run's workflow named when the run failed. */
  workflowId: string;
  /** `pending`: not submitted yet; `submitted`: its task exists; `failed`: it could not be started. */
  state: 'pending' | 'submitted' | 'failed';
  /** The error workflow's background task (its id was chosen when the run failed). */
  taskId: string;
  /** The task's run, once the task started it. */
  runId?: string;
  /** Why it could not be started (state `failed`). */
  error?: {
    /** The stable code (e.g. `workflow_not_found`, `workflow_not_published`, `workflow_inputs_invalid`). */
    code: string;
    /** The reason as text. */
    message: string;
  };
}

/** Which plan a retry from the failed step runs: the failed run's own, or its workflow's latest published version. */
export const RETRY_VERSIONS = ['original', 'current'] as const;
/** One of `RETRY_VERSIONS`. */
export type RetryVersion = (typeof RETRY_VERSIONS)[number];

/** What a retry would do (`POST /api/agent/runs/{runId}/retry/preview`): top-level step ids, in plan order. */
export interface RetryPreview {
  /** Which plan the retry runs. */
  version: RetryVersion;
  /** The workflow version the retry runs, for a run started from a workflow. */
  workflowVersion?: number;
  /** Steps whose completed execution is reused (emitted with `reused: true`). */
  reused: string[];
  /** Steps that run again. */
  rerun: string[];
}
