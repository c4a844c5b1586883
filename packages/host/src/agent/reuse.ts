import type { AgentPlan, PlanStep } from '@fengyu/protocol';
import type { NewEvent } from '../events/event-log';
import { fingerprint } from './run-text';
import type { RunInit, StepHost } from './run-types';
import type { StepExecution } from './run.repository';

/**
 * Completed executions carried into a run (resume, rewind): a step whose fingerprint is unchanged
 * is done without running. A new run records them (`step_complete {reused:true}` and an
 * execution row); a resumed run already has both. Returns the reused step ids and puts their
 * results into `run.results`.
 */
export async function reuseSteps(run: StepHost & { results: Map<string, unknown> }, plan: AgentPlan, init: Pick<RunInit, 'reuse' | 'fresh'>): Promise<string[]> {
  const done: Array<[PlanStep, StepExecution]> = [];
  for (const s of plan.steps) {
    const prior = init.reuse.get(s.id);
    if (prior?.status !== 'done' || prior.fingerprint !== fingerprint(s)) continue;
    done.push([s, prior]);
    run.results.set(s.id, prior.result);
  }
  if (init.fresh && done.length) {
    const events: NewEvent[] = done.map(([s, prior]) => ({ type: 'step_complete', stepId: s.id, index: plan.steps.indexOf(s) + 1, status: 'done', result: prior.result, attempts: prior.attempts, durationMs: 0, reused: true }));
    await run.commit(events, undefined, async (trx) => {
      for (const [s, prior] of done) {
        await run.deps.repo.upsertStep(
          {
            run_id: run.id,
            step_id: s.id,
            status: 'done',
            attempts: prior.attempts,
            result: JSON.stringify(prior.result ?? null),
            error: null,
            started_at: prior.startedAt ?? null,
            finished_at: prior.finishedAt ?? null,
            duration_ms: prior.durationMs ?? null,
            fingerprint: prior.fingerprint ?? fingerprint(s),
            reused: 1,
          },
          trx,
        );
      }
    });
  }
  return done.map(([s]) => s.id);
}
