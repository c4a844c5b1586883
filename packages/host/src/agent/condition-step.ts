import { caseFromAnswer, FengYuError, type PlanStep, pickBranch, type ResolveScope, resolveValue, stepPorts, UnresolvedReferenceError } from '@fengyu/protocol';
import type { NewEvent } from '../events/event-log';
import { errorText, fingerprint } from './run-text';
import type { StepHost } from './run-types';
import type { StepRow } from './run.repository';

/**
 * A condition step: a structured one picks its branch with the pure `pickBranch` over
 * resolved comparison sides; a model one asks the model to name a case (no tools offered). The
 * step's start and end are one commit; its result is `{"branch": "<name>"}` and the port it takes
 * is that name. A pinned condition serves its pinned branch.
 */

export type ConditionEnd = { ok: true; branch: string } | { ok: false; error: string };

/** The references a step may read, as the resolver wants them. */
export function scopeOf(host: StepHost, step: PlanStep): ResolveScope {
  return { stepIds: host.stepIds(), results: host.results, dependsOn: step.dependsOn ?? [], inputs: host.inputs, iteration: host.iteration, skipped: host.skipped, errors: host.failures };
}

/** One comparison side resolved; `undefined` when a reference points at nothing (so `exists` and `empty` can test it). */
function resolveSide(side: unknown, scope: ResolveScope): unknown {
  try {
    return resolveValue(side, scope);
  } catch (err) {
    if (err instanceof UnresolvedReferenceError) return undefined;
    throw err;
  }
}

async function decideBranch(host: StepHost, step: PlanStep): Promise<ConditionEnd> {
  const cases = step.cases ?? [];
  const ports = stepPorts(step);
  if (step.pinned) {
    const branch = (step.pinned.result as { branch?: unknown } | null)?.branch;
    if (typeof branch === 'string' && ports.includes(branch)) return { ok: true, branch };
    return { ok: false, error: errorText(new FengYuError('condition_pinned_invalid', { stepId: step.id })) };
  }
  const scope = scopeOf(host, step);
  if (!step.instruction?.trim()) return { ok: true, branch: pickBranch(cases, (side) => resolveSide(side, scope)) };
  const chooser = host.deps.modelSteps?.choose;
  if (!chooser) return { ok: false, error: errorText(new FengYuError('no_chat_backend')) };
  const instruction = String(resolveValue(step.instruction, scope));
  const answer = await chooser.call(host.deps.modelSteps, {
    owner: host.owner,
    runId: host.id,
    instruction,
    cases: cases.map((c) => ({ name: c.name, description: c.description ?? '' })),
    backend: host.config.backend,
    model: host.config.model,
    signal: host.signal,
  });
  const branch = caseFromAnswer(answer, cases.map((c) => c.name));
  if (branch) return { ok: true, branch };
  return { ok: false, error: errorText(new FengYuError('condition_model_invalid', { stepId: step.id, answer: answer.slice(0, 200) })) };
}

/**
 * Runs a condition step and queues its start and end as one commit; returns how it ended and
 * that commit (`written`). As for a tool step's end, the caller may settle the step before the
 * commit is written: what its dependents commit is queued after it (the log keeps the order), and
 * a failed commit fails the run before anything later is written.
 */
export async function runCondition(host: StepHost, step: PlanStep): Promise<ConditionEnd & { written: Promise<unknown> }> {
  const started = host.deps.clock.now();
  const startedAt = host.now();
  let end: ConditionEnd;
  try {
    end = await decideBranch(host, step);
  } catch (err) {
    end = { ok: false, error: errorText(err) };
  }
  const index = host.indexOf(step.id);
  const durationMs = host.deps.clock.now() - started;
  const frame = host.frame;
  const result = end.ok ? { branch: end.branch } : undefined;
  const events: NewEvent[] = [
    { type: 'step_start', stepId: step.id, index, title: step.title, attempt: step.pinned ? 0 : 1, ...(step.pinned ? { pinned: true } : {}), ...frame },
    end.ok
      ? { type: 'step_complete', stepId: step.id, index, status: 'done', result, attempts: 1, durationMs, ...frame }
      : { type: 'step_complete', stepId: step.id, index, status: 'failed', error: end.error, attempts: 1, durationMs, ...frame },
  ];
  const row: StepRow = {
    run_id: host.id,
    step_id: host.rowKey ? host.rowKey(step.id) : step.id,
    status: end.ok ? 'done' : 'failed',
    attempts: 1,
    result: end.ok ? JSON.stringify(result) : null,
    error: end.ok ? null : end.error,
    started_at: startedAt,
    finished_at: host.now(),
    duration_ms: durationMs,
    fingerprint: fingerprint(step),
    reused: 0,
  };
  const written = host.commitQueued(events, { status: host.liveStatus() }, row);
  return { ...end, written };
}

/** The port a reused (or pinned) step takes: a condition's stored branch; none for other steps. */
export function portOf(step: PlanStep | undefined, result: unknown): string | undefined {
  if (!step || (step.kind ?? '') !== 'condition') return undefined;
  const branch = (result as { branch?: unknown } | null)?.branch;
  return typeof branch === 'string' ? branch : undefined;
}
