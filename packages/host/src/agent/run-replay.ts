import { type AgentPlan, FengYuError, type RetryPreview, type RunStatus } from '@fengyu/protocol';
import { type InputAnswer, inputAnswerOf } from './gates';
import { RETRY_VERSIONS, type RetryVersion, retrySplit } from './retry';
import type { ResolvedConfig, RunSecrets } from './run-types';
import { executionKey, parsePlan, type RunRow, type StepExecution } from './run.repository';
import { revealSecretInputs } from './secret-inputs';
import { replayConfig, type StartRequest } from './start-request';

/**
 * A finished run started again: what a resume, fork, rewind or retry reuses of it (its completed
 * executions) and the request of the new run (the old run's inputs — secret ones read back from
 * the vault — files and settings).
 */

/** The latest published plan of a workflow and its version, when it has one (retry with `current`). */
export type CurrentPlan = (owner: string, workflowId: string) => Promise<{ plan: AgentPlan; version: number } | undefined>;

/**
 * The executions a run continuing from them reuses, keyed by `executionKey`: done steps, and the
 * skipped body steps of a loop's iteration (they count towards a finished iteration). With `kept`,
 * only the executions of those step ids.
 */
export function reusableExecutions(executions: readonly StepExecution[], kept?: ReadonlySet<string>): Map<string, StepExecution> {
  return new Map(executions.filter((e) => (e.status === 'done' || (e.status === 'skipped' && e.iteration !== undefined)) && (!kept || kept.has(e.stepId))).map((e) => [executionKey(e), e]));
}

/**
 * The input answer `row` kept (committed with its gate's answer while its step was not yet
 * committed: a crash between the two) that a run continuing with `plan` and `reuse` takes instead
 * of asking again — only while `plan` still has that input step with the same form, not reused.
 */
export function keptInputAnswer(row: RunRow, plan: AgentPlan, reuse: ReadonlyMap<string, StepExecution>): InputAnswer | undefined {
  const kept = inputAnswerOf(row.input_answer);
  if (!kept || reuse.has(kept.stepId)) return undefined;
  const step = plan.steps.find((s) => s.id === kept.stepId);
  const was = parsePlan(row)?.steps.find((s) => s.id === kept.stepId);
  if (step?.kind !== 'input' || !was || JSON.stringify(step.form) !== JSON.stringify(was.form)) return undefined;
  return kept;
}

/** What differs between the replays' requests: the plan to run, its settings, the origin and the workflow version. */
export interface ReplayShape {
  workflow: AgentPlan;
  planApproval?: false;
  origin: 'fork' | 'rewind' | 'retry';
  workflowVersion: number | undefined;
}

/** The request of a new run made from the finished run `row` (fork, rewind, retry). */
export function replayRequest(secrets: RunSecrets | undefined, row: RunRow, shape: ReplayShape): StartRequest {
  const config = JSON.parse(row.config) as ResolvedConfig;
  return {
    owner: row.owner,
    goal: row.goal ?? undefined,
    workflow: shape.workflow,
    config: { ...replayConfig(config), ...(shape.planApproval === false ? { planApproval: false } : {}) },
    inputs: revealSecretInputs(secrets, row.owner, row.id, JSON.parse(row.inputs), config.secretInputs),
    inputNames: config.inputNames,
    fileInputNames: config.fileInputNames,
    ...(config.secretInputs ? { secretInputs: config.secretInputs } : {}),
    grants: JSON.parse(row.files ?? '[]'),
    origin: shape.origin,
    workflowId: row.workflow_id ?? undefined,
    workflowVersion: shape.workflowVersion,
  };
}

/** The plan of a rewind keeping its first `keep` steps, and the executions it reuses (a kept forEach keeps its finished iterations). */
export function rewindPlan(plan: AgentPlan, keep: number, executions: readonly StepExecution[]): { plan: AgentPlan; reuse: Map<string, StepExecution> } {
  if (!Number.isInteger(keep) || keep < 1 || keep > plan.steps.length) throw new FengYuError('invalid_keep_steps', { max: plan.steps.length });
  const steps = plan.steps.slice(0, keep);
  // body steps are keyed by step and iteration
  const kept = new Set(steps.flatMap((s) => [s.id, ...(s.steps ?? []).map((b) => b.id)]));
  return { plan: { ...plan, steps }, reuse: reusableExecutions(executions, kept) };
}

/** What a retry runs: the preview, the run's row, the plan and the executions it reuses. */
export type RetryPlan = RetryPreview & { row: RunRow; plan: AgentPlan; reuse: Map<string, StepExecution> };

/**
 * The retry of the run `row` (not live here: `live`) with `version`: the run's own plan, or its
 * workflow's latest published one read through `current`. Checked before anything is written.
 */
export async function planRetry(row: RunRow, live: boolean, version: unknown, current: CurrentPlan | undefined, executions: () => Promise<StepExecution[]>): Promise<RetryPlan> {
  const chosen = version ?? 'original';
  if (!RETRY_VERSIONS.includes(chosen as RetryVersion)) throw new FengYuError('retry_version_invalid', { version: JSON.stringify(version) });
  if (!(['failed', 'interrupted'] as RunStatus[]).includes(row.status) || live) throw new FengYuError('run_not_retryable', { runId: row.id, status: row.status });
  const old = parsePlan(row);
  if (!old) throw new FengYuError('run_not_retryable', { runId: row.id, status: `${row.status} (it has no plan)` });
  let plan = old;
  let workflowVersion = row.workflow_version ?? undefined;
  if (chosen === 'current') {
    const latest = row.workflow_id && current ? await current(row.owner, row.workflow_id) : undefined;
    if (!latest) throw new FengYuError('retry_no_current_version', { runId: row.id });
    plan = latest.plan;
    workflowVersion = latest.version;
  }
  const split = retrySplit(old, plan, await executions());
  return { row, plan, reuse: split.reuse, version: chosen as RetryVersion, ...(workflowVersion !== undefined ? { workflowVersion } : {}), reused: split.reused, rerun: split.rerun };
}
