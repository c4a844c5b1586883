import type { FailedStep, PlanStep, StepFailure } from '@fengyu/protocol';
import type { RunFailure } from './error-outbox.repository';

/**
 * Failures a run went past (docs/workflows.md "Failure handling"): a step set to
 * `onError: "continue"` or `"branch"` that failed ends `failed` in its execution, its result is
 * `null`, `{{node.<id>.error}}` reads `{code, message}`, and the run's `complete` event and detail
 * list it in `failedSteps`. A step set to `fail` (the default) fails the run instead.
 */

/** The code of a failure that carries none of its own (a refused permission, an unresolved reference). */
export const GENERIC_FAILURE_CODE = 'step_failed';

/** Whether a failure of `step` lets the run go on. */
export function handlesFailure(step: Pick<PlanStep, 'onError'> | undefined): boolean {
  return step?.onError === 'continue' || step?.onError === 'branch';
}

export function failureOf(message: string, code?: string): StepFailure {
  return { code: code ?? GENERIC_FAILURE_CODE, message };
}

/** A run's handled failures: by step id for references (top-level steps), and as the list the run ends with. */
export class FailedSteps {
  readonly list: FailedStep[] = [];
  /** Top-level steps' failures, what `{{node.<id>.error}}` reads outside a loop body. */
  readonly errors = new Map<string, StepFailure>();
  /** Top-level steps' failures no `onError` went past: the run fails with the first in plan order. */
  readonly fatal = new Map<string, StepFailure>();
  /** The failure the run ends with, set just before its end is written (its error-workflow outbox row). */
  ending?: Omit<RunFailure, 'at'>;

  add(stepId: string, error: StepFailure, iteration?: number): void {
    if (iteration === undefined) this.errors.set(stepId, error);
    this.list.push(iteration === undefined ? { stepId, error } : { stepId, iteration, error });
  }

  /** A top-level step failed: when its `onError` goes past it, records it (result null) and answers true. */
  handle(step: Pick<PlanStep, 'id' | 'onError'> | undefined, message: string, code: string | undefined, results: Map<string, unknown>): boolean {
    if (!step || !handlesFailure(step)) return false;
    results.set(step.id, null);
    this.add(step.id, failureOf(message, code));
    return true;
  }

  /** A top-level step failed: handled (see `handle`), or kept as a failure of the run. */
  record(step: Pick<PlanStep, 'id' | 'onError'> | undefined, stepId: string, message: string, code: string | undefined, results: Map<string, unknown>): void {
    if (!this.handle(step, message, code, results)) this.fatal.set(stepId, failureOf(message, code));
  }

  /** The list in a stable order: by step position in the plan, then iteration. */
  sorted(stepIds: readonly string[]): FailedStep[] {
    const at = new Map(stepIds.map((id, i) => [id, i]));
    return [...this.list].sort((a, b) => (at.get(a.stepId) ?? 1e9) - (at.get(b.stepId) ?? 1e9) || a.stepId.localeCompare(b.stepId) || (a.iteration ?? -1) - (b.iteration ?? -1));
  }
}
