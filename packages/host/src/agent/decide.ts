import { dependencyStep, localize, type PlanStep } from '@fengyu/protocol';

/**
 * The runner's pure decision: given the state of a run's steps, which steps to launch now and
 * whether the run is over. The run reducer (`run-reducer.ts`) asks it after every change.
 * No I/O, no clock.
 */

export type StepStatus = 'pending' | 'active' | 'done' | 'failed' | 'skipped';

/** What the decision needs of a step: its id and prerequisites. */
export interface StepLinks {
  id: string;
  dependsOn?: readonly string[];
}

export interface DecisionInput {
  steps: readonly StepLinks[];
  /** Each step's status (a Map, or any lookup by step id; `index`, when given, is the step's position in `steps`). */
  status: { get(stepId: string, index?: number): StepStatus | undefined };
  maxConcurrency: number;
  cancelRequested: boolean;
  /** How many steps are active, done and failed, when the caller keeps these counts (else they are counted here). */
  counts?: { active: number; done: number; failed: number; skipped?: number };
  /**
   * How many prerequisites of each step (by position) are not done, when the caller keeps these
   * counts: a pending step is ready when its count is 0 (else its dependencies are looked up).
   */
  unmet?: readonly number[];
}

export type Decision =
  | { kind: 'launch'; stepIds: string[] }
  | { kind: 'wait' }
  | { kind: 'finish'; outcome: 'completed' | 'failed' | 'cancelled' };

export function decide(input: DecisionInput): Decision {
  const { steps, status } = input;
  let active = 0;
  let failed = false;
  // done or skipped: a skipped step is settled too
  let done = 0;
  if (input.counts) {
    ({ active, done } = input.counts);
    done += input.counts.skipped ?? 0;
    failed = input.counts.failed > 0;
  } else
    for (const s of steps) {
      const st = status.get(s.id) ?? 'pending';
      if (st === 'active') active += 1;
      else if (st === 'failed') failed = true;
      else if (st === 'done' || st === 'skipped') done += 1;
    }
  if (input.cancelRequested) return active === 0 ? { kind: 'finish', outcome: 'cancelled' } : { kind: 'wait' };
  if (failed) return active === 0 ? { kind: 'finish', outcome: 'failed' } : { kind: 'wait' };
  if (done === steps.length) return { kind: 'finish', outcome: 'completed' };
  const room = input.maxConcurrency - active;
  const ready: string[] = [];
  const unmet = input.unmet;
  for (let i = 0; i < steps.length && ready.length < room; i++) {
    const s = steps[i] as StepLinks;
    if ((status.get(s.id, i) ?? 'pending') !== 'pending') continue;
    if (unmet ? unmet[i] === 0 : (s.dependsOn ?? []).every((d) => status.get(d) === 'done')) ready.push(s.id);
  }
  if (ready.length > 0) return { kind: 'launch', stepIds: ready };
  return { kind: 'wait' };
}

/**
 * Whether a step must pause at a gate before it runs (beyond the guard's own `ask`), and why: the
 * tables' English (approval_step_*), which the UI reads back into its language.
 */
export function needsStepGate(step: PlanStep, cfg: { stepApproval: boolean; permissionMode: string }): string | undefined {
  if (cfg.stepApproval) return localize('approval_step_every');
  if (step.requiresApproval && cfg.permissionMode !== 'full-access') return localize('approval_step_marked');
  return undefined;
}

/** The result of a finished run: the single sink step's result, or sink results by step id (a skipped sink's is null). */
export function runResult(steps: readonly PlanStep[], results: ReadonlyMap<string, unknown>): unknown {
  const used = new Set(steps.flatMap((s) => (s.dependsOn ?? []).map(dependencyStep)));
  const sinks = steps.filter((s) => !used.has(s.id));
  if (sinks.length === 1) return results.get((sinks[0] as PlanStep).id) ?? null;
  return Object.fromEntries(sinks.map((s) => [s.id, results.get(s.id) ?? null]));
}
