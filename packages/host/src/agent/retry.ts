import type { AgentPlan, PlanStep } from '@fengyu/protocol';
import { fingerprint } from './run-text';
import type { StepExecution } from './run.repository';

/**
 * Retry from the failed step: which completed executions of the old run the new one reuses. A
 * step is unchanged when the plan the retry runs has a step of the same id with the same tool,
 * argument template (and instruction) — its fingerprint — and the same dependencies as the step
 * that produced the execution. Only `done` executions are reused; every other step runs again.
 */

export { RETRY_VERSIONS, type RetryVersion } from '@fengyu/protocol';

export interface RetrySplit {
  /** Step ids whose completed execution is reused, in plan order. */
  reused: string[];
  /** Step ids that run again, in plan order. */
  rerun: string[];
  /** The executions reused, by step id. */
  reuse: Map<string, StepExecution>;
}

/** Dependencies compared as a set (their order in `dependsOn` does not matter). */
function sameDependencies(a: PlanStep, b: PlanStep): boolean {
  const x = [...new Set(a.dependsOn ?? [])].sort();
  const y = [...new Set(b.dependsOn ?? [])].sort();
  return x.length === y.length && x.every((d, i) => d === y[i]);
}

/** Splits `next`'s top-level steps into reused and re-run, against the old run's plan and executions. */
export function retrySplit(old: AgentPlan, next: AgentPlan, executions: readonly StepExecution[]): RetrySplit {
  const oldSteps = new Map(old.steps.map((s) => [s.id, s]));
  // top-level steps only: a body step's executions are per iteration (reused by the loop itself)
  const done = new Map(executions.filter((e) => e.status === 'done' && e.iteration === undefined).map((e) => [e.stepId, e]));
  const split: RetrySplit = { reused: [], rerun: [], reuse: new Map() };
  for (const step of next.steps) {
    const before = oldSteps.get(step.id);
    const execution = done.get(step.id);
    const unchanged = before !== undefined && execution !== undefined && fingerprint(step) === fingerprint(before) && (execution.fingerprint === undefined || execution.fingerprint === fingerprint(step)) && sameDependencies(step, before);
    if (unchanged && execution) {
      split.reused.push(step.id);
      split.reuse.set(step.id, execution);
    } else split.rerun.push(step.id);
  }
  return split;
}
