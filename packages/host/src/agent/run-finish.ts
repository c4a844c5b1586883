import { type AgentPlan, FengYuError, localize, type RunStatus, type StepFailure } from '@fengyu/protocol';
import type { RunFailure } from './error-outbox.repository';
import { type NewEvent, presetJson } from '../events/event-log';
import { runResult } from './decide';
import type { RunOutcome } from './run-reducer';
import type { StepHost } from './run-types';
import { errorText } from './run-text';
import type { RunRow } from './run.repository';
import type { HeldEnd } from './step-runner';
import type { FailedSteps } from './failed-steps';
import { resultJsonOf } from '../tools/result-json';

/** The end of a run: its result and summary, the terminal event, and the run-end hooks. */

type FinishingRun = StepHost & { goal?: string; plan?: AgentPlan; cancelSummary?: string; failed: FailedSteps };

/**
 * The summary of a run whose plan was rejected: the reason is kept in the run's history, where
 * `GET /api/agent/runs?q=` finds it and the run detail shows it (besides the
 * `plan_rejected` audit event that carries it).
 */
export function planRejectedSummary(reason: string | undefined): string {
  return reason ? `Plan rejected: ${reason}` : 'Plan rejected.';
}

/**
 * Commits the terminal event with the row's final state; returns the status written. `held`, the
 * last step's end when not yet written, is written in the same transaction, before the terminal
 * event; a model-written summary takes a while, so with one the step's end is written first.
 */
export async function finishRun(run: FinishingRun, outcome: RunOutcome, held?: HeldEnd): Promise<RunStatus> {
  const write = (events: NewEvent[], patch: Partial<RunRow>) => (held ? held.write(events, patch) : run.commit(events, patch));
  if (outcome === 'completed') {
    const plan = run.plan as AgentPlan;
    const result = runResult(plan.steps, run.results);
    // a result whose text is known (the held end's, a loop's array, a worker's answer) is not serialized again
    const resultJson = heldResultJson(run, held, result) ?? resultJsonOf(result) ?? JSON.stringify(result ?? null);
    const summary = await summarize(run, plan, held);
    // the result is serialized once: the row's text, and the event's payload made from it
    // the failures the run went past (onError) are listed with its end (docs/workflows.md)
    const failedSteps = run.failed.list.length ? run.failed.sorted(plan.steps.map((s) => s.id)) : undefined;
    const complete: NewEvent = failedSteps ? { type: 'complete', result, summary, failedSteps } : { type: 'complete', result, summary };
    presetJson.set(complete, `{"result":${resultJson},"summary":${JSON.stringify(summary)}${failedSteps ? `,"failedSteps":${JSON.stringify(failedSteps)}` : ''}}`);
    await write([complete], { finished_at: run.now(), gate: null, status: 'completed', summary, result: resultJson });
    return 'completed';
  }
  const end = { finished_at: run.now(), gate: null };
  if (outcome === 'failed') {
    const { message, failing } = runFailure(run.plan, run.failed.fatal);
    run.failed.ending = failing;
    await write([{ type: 'error', message }], { ...end, status: 'failed', error: message });
    return 'failed';
  }
  await write([{ type: 'cancelled' }], { ...end, status: 'cancelled', ...(run.cancelSummary ? { summary: run.cancelSummary } : {}) });
  return 'cancelled';
}

/**
 * The run's result as JSON text when it is the result of the step whose end is held (a run with
 * one sink ending with that step): the text the step's row stores, made once for that row and its
 * events, instead of serializing the same value again.
 */
function heldResultJson(run: FinishingRun, held: HeldEnd | undefined, result: unknown): string | undefined {
  const row = held?.row;
  if (row?.status !== 'done' || row.result === null || !run.results.has(row.step_id)) return undefined;
  return run.results.get(row.step_id) === result ? row.result : undefined;
}

export async function runEndHooks(run: FinishingRun, status: 'completed' | 'failed'): Promise<void> {
  const guard = run.deps.guard();
  if (!guard.runEnded) return;
  try {
    const audits = await guard.runEnded({ runId: run.id, owner: run.owner, status, goal: run.goal });
    if (audits.length) await run.commit(audits.map((a) => ({ type: 'audit', kind: 'hook', ...a }) as NewEvent));
  } catch (err) {
    run.deps.logger.warn({ runId: run.id, err }, 'run end hooks failed');
  }
}

async function summarize(run: FinishingRun, plan: AgentPlan, held?: HeldEnd): Promise<string> {
  const planner = run.deps.planner;
  if (planner?.summarize) {
    try {
      if (held && !held.written) {
        // without a chat backend there is no model summary: the plain one follows at once
        const available = planner.availableNow?.(run.owner, run.config.backend) ?? (await planner.available(run.owner, run.config.backend));
        if (!available) return plainSummary(run, plan);
        void held.write();
      }
      const text = await planner.summarize({
        owner: run.owner,
        goal: run.goal,
        plan,
        results: Object.fromEntries(run.results),
        backend: run.config.backend,
        model: run.config.model,
        signal: run.signal,
      });
      if (text) return text;
    } catch (err) {
      run.deps.logger.warn({ runId: run.id, err }, 'summary failed; using the plain one');
    }
  }
  return plainSummary(run, plan);
}

function plainSummary(run: FinishingRun, plan: AgentPlan): string {
  return run.goal ? localize('run_summary_plain_goal', { count: plan.steps.length, goal: run.goal }) : localize('run_summary_plain', { count: plan.steps.length });
}

/**
 * The run's error (the first failed step in plan order), and what its error workflow is told: that
 * step, its error's code and its own message.
 */
function runFailure(plan: AgentPlan | undefined, errors: ReadonlyMap<string, StepFailure>): { message: string; failing: Omit<RunFailure, 'at'> } {
  for (const s of plan?.steps ?? []) {
    const e = errors.get(s.id);
    if (e) return { message: localize('run_failed_step', { stepId: s.id, reason: e.message }), failing: { ...e, stepId: s.id } };
  }
  const message = localize('run_failed');
  return { message, failing: { code: 'run_failed', message } };
}

/** How many times the record of a run's failure is tried, the first retry after this many ms (doubling). */
const FAILURE_RECORD_ATTEMPTS = 6;
const FAILURE_RECORD_RETRY_MS = 50;

/** A run whose failure is recorded: its commit may be told that this is its last transition (`last`). */
interface FailingRun {
  readonly id: string;
  readonly failed: FailedSteps;
  readonly deps: StepHost['deps'];
  now(): string;
  commit(events: NewEvent[], patch?: Partial<RunRow>, more?: undefined, last?: boolean): Promise<unknown>;
}

/**
 * Records the failure of a run outside of a step (planning, validation of an edited plan,
 * storage). A record that cannot be written is tried again after a growing wait (a busy or full
 * disk may recover), so that the run does not stay `running` in storage; after the last attempt,
 * or when the host shuts down meanwhile (`closed`: it records `interrupted`), it gives up.
 */
export async function recordFailure(run: FailingRun, err: unknown, closed: () => boolean): Promise<void> {
  const message = errorText(err);
  const code = (err as { code?: string }).code;
  run.failed.ending = { code: code ?? 'run_failed', message };
  for (let attempt = 1; ; attempt++) {
    try {
      const details = err instanceof FengYuError && err.details ? { details: err.details } : {};
      await run.commit([{ type: 'error', message, ...(code ? { code } : {}), ...details }], { status: 'failed', error: message, finished_at: run.now(), gate: null }, undefined, true);
      return;
    } catch (e) {
      run.deps.logger.error({ runId: run.id, err: e, attempt }, 'could not persist a run failure');
      if (attempt >= FAILURE_RECORD_ATTEMPTS || closed()) return;
      await new Promise((r) => setTimeout(r, FAILURE_RECORD_RETRY_MS * 2 ** (attempt - 1)).unref());
      if (closed()) return;
    }
  }
}
