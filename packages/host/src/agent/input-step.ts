import { FengYuError, INPUT_TIMEOUT_DEFAULT_MS, type PlanStep, valueProblems } from '@fengyu/protocol';
import type { NewEvent } from '../events/event-log';
import type { GateOutcome, InputRequest, OpenGate } from './gates';
import { errorText, fingerprint } from './run-text';
import type { StepHost } from './run-types';
import type { StepRow } from './run.repository';

/**
 * Input steps (docs/workflows.md): the run stops for a person's values. The step opens an input gate (the
 * run `awaiting_input`, `input_requested` and its inbox item in one commit); its answer — values
 * that satisfy the form, checked before anything changes — or its timeout (`gate_expired`, or the
 * defaults with `onTimeout: "default"`) settles the gate; then the step's start and end are one
 * commit and its result is the values. Nothing of the step is written while it waits, so a host
 * stop parks the run at its gate (parked.ts) like an approval's.
 */

import './input.errors';

/** What an input step asks, from the step (its wait starts when its gate opens). */
export function inputRequest(step: PlanStep): InputRequest {
  return {
    title: (step.title ?? step.id).slice(0, 200),
    form: step.form ?? { type: 'object', properties: {} },
    timeoutMs: step.timeoutMs ?? INPUT_TIMEOUT_DEFAULT_MS,
    onTimeout: step.onTimeout === 'default' ? 'default' : 'fail',
    ...(step.defaults ? { defaults: step.defaults } : {}),
  };
}

/** How an input gate ends when nobody answered in time: its defaults, or the step fails `gate_expired`. */
export function timeoutOutcome(gate: OpenGate): GateOutcome {
  const input = gate.input;
  if (input?.onTimeout === 'default') return { kind: 'values', values: completeValues(input.form, input.defaults ?? {}), how: 'defaulted' };
  return { kind: 'rejected', reason: `gate_expired: ${errorText(new FengYuError('gate_expired', { kind: 'input', stepId: gate.stepId, expiresAt: input?.expiresAt ?? '' }))}` };
}

/** The values of an answer body `{values: {…}}`; 400 for any other shape. */
export function answerValues(body: unknown): Record<string, unknown> {
  const obj = body as { values?: unknown } | null;
  const ok = !!obj && typeof obj === 'object' && !Array.isArray(obj) && Object.keys(obj).every((k) => k === 'values');
  const values = ok ? obj.values : undefined;
  if (!values || typeof values !== 'object' || Array.isArray(values)) throw new FengYuError('invalid_request', { reason: 'the body is {"values": {…}} with the form\'s fields' });
  return values as Record<string, unknown>;
}

/**
 * The step's result: every field of the form, a field left out (an optional one) as `null`, so
 * `{{node.ask.result.<field>}}` always resolves.
 */
export function completeValues(form: Record<string, unknown>, values: Record<string, unknown>): Record<string, unknown> {
  const props = form.properties && typeof form.properties === 'object' ? Object.keys(form.properties) : [];
  return { ...Object.fromEntries(props.map((k) => [k, null])), ...values };
}

/**
 * Checks values against the gate's form: 400 `input_values_invalid` listing every field that does
 * not fit (the gate stays); else the step's result (`completeValues`).
 */
export function checkValues(gate: OpenGate, values: Record<string, unknown>): Record<string, unknown> {
  const form = gate.input?.form ?? {};
  const problems = valueProblems(form, values).map((p) => ({ ...p, stepId: gate.stepId }));
  if (problems.length) throw new FengYuError('input_values_invalid', { fields: problems.map((p) => String(p.params?.field)).join(', ') }, problems);
  return completeValues(form, values);
}

/** What an input step needs of its run: a step host that can open an input gate. */
export interface InputHost extends StepHost {
  readonly gates: { requestInput(stepId: string, request: InputRequest): Promise<GateOutcome> };
  recordError(stepId: string, error: string, code?: string): void;
  readonly results: Map<string, unknown>;
  dispatch(input: { type: 'step_settled'; stepId: string; ok: boolean } | { type: 'step_parked'; stepId: string }): void;
  failWith(err: unknown): void;
  hasEnded(): boolean;
}

/** Runs a top-level input step: waits at its gate, then commits its start and end together. */
export async function runInputStep(host: InputHost, step: PlanStep): Promise<void> {
  try {
    const started = host.deps.clock.now();
    const startedAt = host.now();
    const outcome: GateOutcome = step.pinned ? { kind: 'values', values: step.pinned.result as Record<string, unknown>, how: 'answered' } : await host.gates.requestInput(step.id, inputRequest(step));
    if (host.hasEnded()) return;
    if (outcome.kind === 'cancelled' || outcome.kind === 'approved' || host.cancelRequested()) return host.dispatch({ type: 'step_parked', stepId: step.id });
    const ok = outcome.kind === 'values';
    const error = outcome.kind === 'rejected' ? outcome.reason : undefined;
    const index = host.indexOf(step.id);
    const durationMs = host.deps.clock.now() - started;
    const events: NewEvent[] = [
      { type: 'step_start', stepId: step.id, index, title: step.title, attempt: step.pinned ? 0 : 1, ...(step.pinned ? { pinned: true } : {}) },
      ok ? { type: 'step_complete', stepId: step.id, index, status: 'done', result: outcome.values, attempts: 1, durationMs } : { type: 'step_complete', stepId: step.id, index, status: 'failed', error, attempts: 1, durationMs },
    ];
    const row: StepRow = {
      run_id: host.id,
      step_id: step.id,
      status: ok ? 'done' : 'failed',
      attempts: 1,
      result: ok ? JSON.stringify(outcome.values) : null,
      error: error ?? null,
      started_at: startedAt,
      finished_at: host.now(),
      duration_ms: durationMs,
      fingerprint: fingerprint(step),
      reused: 0,
    };
    // an answer kept on the row for a resume (runs.input_answer) is the step's result now
    await host.commit(events, { status: host.liveStatus(), ...(ok && !step.pinned ? { input_answer: null } : {}) }, row);
    if (host.hasEnded()) return;
    if (ok) host.results.set(step.id, outcome.values);
    else host.recordError(step.id, error as string, 'gate_expired');
    host.dispatch({ type: 'step_settled', stepId: step.id, ok });
  } catch (err) {
    if (!host.hasEnded()) host.failWith(err);
  }
}
