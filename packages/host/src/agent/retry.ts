import { type AgentPlan, dependencyStep, type PlanStep, stepKind } from '@fengyu/protocol';
import { fingerprint } from './run-text';
import { executionKey, type StepExecution } from './run.repository';

/**
 * Retry from the failed step: which completed executions of the old run the new one reuses. A
 * step is unchanged when the plan the retry runs has a step of the same id with the same tool,
 * argument template (and instruction) — its fingerprint — and the same dependencies as the step
 * that produced the execution. Only `done` executions are reused; every other step runs again.
 * A forEach that runs again keeps its finished iterations when the loop (items, body, limits) and
 * its dependencies are unchanged and every prerequisite is reused (so its items are the same):
 * their body executions (done or skipped, keyed `<stepId>#<iteration>`) go into `reuse`, and the
 * loop reuses an iteration only when all of its body steps finished there unchanged.
 */

export { RETRY_VERSIONS, type RetryVersion } from '@fengyu/protocol';

export interface RetrySplit {
  /** Step ids whose completed execution is reused, in plan order. */
  reused: string[];
  /** Step ids that run again, in plan order. */
  rerun: string[];
  /** The executions reused, by step id (a loop's finished iterations by `<stepId>#<iteration>`). */
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
  for (const step of next.steps) {
    const before = oldSteps.get(step.id);
    if (stepKind(step) !== 'forEach' || !before || !split.rerun.includes(step.id)) continue;
    if (fingerprint(step) !== fingerprint(before) || !sameDependencies(step, before)) continue;
    if (!(step.dependsOn ?? []).every((d) => split.reuse.has(dependencyStep(d)))) continue;
    const body = new Set((step.steps ?? []).map((b) => b.id));
    for (const e of executions) {
      if (e.iteration !== undefined && body.has(e.stepId) && (e.status === 'done' || e.status === 'skipped')) split.reuse.set(executionKey(e), e);
    }
  }
  return split;
}
