import type { FailedStep, RunEvent } from './events';
import type { AgentPlan, RunStatus } from './plan';

export type { FailedStep } from './events';

/** Run history as the API answers it (the host and the UI share these shapes). */

/** One step's execution record. */
export interface StepExecution {
  stepId: string;
  /** `uncertain`: the host stopped while its non-idempotent tool ran (it may have taken effect). */
  status: 'running' | 'done' | 'failed' | 'uncertain' | 'skipped';
  /** A step inside a forEach body: the iteration (0-based item index) and the forEach step. */
  iteration?: number;
  parentStepId?: string;
  attempts: number;
  result?: unknown;
  error?: string;
  startedAt?: string;
  finishedAt?: string;
  durationMs?: number;
  /** A digest of what the step does (tool, arguments, instruction): a resumed or rewound run reuses a done step whose fingerprint is unchanged. */
  fingerprint?: string;
  /** The result was carried over from an earlier run (resume, rewind) instead of run again. */
  reused: boolean;
}

/** A run in the history list. */
export interface RunListItem {
  id: string;
  goal: string | null;
  status: RunStatus;
  summary: string | null;
  error: string | null;
  origin: string;
  parentRunId: string | null;
  workflowId: string | null;
  workflowVersion: number | null;
  stepCount: number;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

/** A run's detail: the list item, its plan (secrets redacted), settings, executions and event log. */
export interface RunDetail extends RunListItem {
  plan: AgentPlan | null;
  config: Record<string, unknown>;
  inputs: Record<string, unknown>;
  result: unknown;
  gate: unknown;
  sandbox: { mode?: string; backend?: string } | null;
  executions: StepExecution[];
  /** A completed run's failures that `onError` went past (absent when there were none). */
  failedSteps?: FailedStep[];
  /** The run's event log, without the plan's token stream. */
  events: RunEvent[];
}

/** Which plan a retry from the failed step runs: the failed run's own, or its workflow's latest published version. */
export const RETRY_VERSIONS = ['original', 'current'] as const;
/** One of `RETRY_VERSIONS`. */
export type RetryVersion = (typeof RETRY_VERSIONS)[number];

/** What a retry would do (`POST /api/agent/runs/{runId}/retry/preview`): top-level step ids, in plan order. */
export interface RetryPreview {
  version: RetryVersion;
  /** The workflow version the retry runs, for a run started from a workflow. */
  workflowVersion?: number;
  /** Steps whose completed execution is reused (emitted with `reused: true`). */
  reused: string[];
  /** Steps that run again. */
  rerun: string[];
}
