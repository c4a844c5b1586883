import { dropRedactedSecrets, FengYuError, isFengYuError, isRetrySafe, type PlanStep, type ResolveScope, redactSecrets, resolveValue, ShellTemplateError, UnresolvedReferenceError, localize } from '@fengyu/protocol';
import { secretInputsFor } from './secret-inputs';
import { resolveArguments } from './step-arguments';
import { dispatchArguments, redactOutcome } from '../secrets/dispatch';
import type { NewEvent } from '../events/event-log';
import type { GuardDecision, ToolCall } from '../permissions/types';
import { type AbortWatch, CallScope } from '../tools/call-scope';
import type { Tool, ToolContext } from '../tools/tool';
import './failure.errors';
import { needsStepGate } from './decide';
import { errorText, fingerprint } from './run-text';
import type { StepHost } from './run-types';
import type { RunRow, StepRow } from './run.repository';
import { callEvent, jsonOf, keptField, keptJson, keptResult, MAX_RESULT_BYTES, type Outcome, stepComplete, tooLarge, toolResult } from './step-events';

/**
 * Runs one step of a live run: resolve references, pass the guard (which may open a gate),
 * invoke the tool with timeout, cancellation and retries, and commit each transition. It reports
 * how the step ended; the run executor records it and decides what runs next.
 */

export { MAX_RESULT_BYTES } from './step-events';

/**
 * The context of a step's tool call. A class, so that every call's context has one shape and its
 * `signal` getter lives on the prototype (an object literal with a getter defines the accessor
 * anew per call): the real signal is made only when a tool reads it.
 */
class StepCallContext implements ToolContext {
  readonly owner: string;
  readonly runId: string;
  readonly permissionMode: ToolContext['permissionMode'];
  readonly grants: ToolContext['grants'];

  constructor(
    readonly abort: CallScope,
    run: StepHost,
    readonly stepId: string,
    readonly approved: boolean,
    readonly emit: NonNullable<ToolContext['emit']>,
    readonly progress: NonNullable<ToolContext['progress']>,
  ) {
    this.owner = run.owner;
    this.runId = run.id;
    this.permissionMode = run.config.permissionMode;
    this.grants = run.grants;
  }

  get signal(): AbortSignal {
    return this.abort.signal;
  }
}

/**
 * A step's end (its events and its execution row), built when the step settled and committed
 * once, by `write`: the run executor writes it alone, or, when it is the run's last transition
 * before the run's end, together with that end in one transaction.
 */
export class HeldEnd {
  private done?: Promise<unknown>;

  constructor(
    private readonly run: StepHost,
    readonly events: NewEvent[],
    readonly row: StepRow,
    /** `turn`: queued to the group commit of its turn; `held`: may wait for later turns too (alone). */
    readonly queue?: 'turn' | 'held',
  ) {}

  /** The commit of the end, once `write` was called. */
  get written(): Promise<unknown> | undefined {
    return this.done;
  }

  /**
   * Commits the end with `more` events after it and the run row's `patch`, in one transaction.
   * Once the end is written, `more` and `patch` are committed on their own after it.
   */
  write(more: NewEvent[] = [], patch?: Partial<RunRow>): Promise<unknown> {
    if (this.done) return more.length || patch ? this.run.commit(more, patch) : this.done;
    const alone = more.length === 0 && !patch;
    this.done = this.queue ? this.run.commitQueued([...this.events, ...more], patch, this.row, alone && this.queue === 'held') : this.run.commit([...this.events, ...more], patch, this.row);
    return this.done;
  }
}

/**
 * How a started step ended: settled (done or failed), or parked (its gate was cancelled).
 * `written` settles when every transition of the step before its end is committed. The end itself
 * is `end`, not yet written unless a later transition of the step needed it first: the caller
 * writes it. A step's end is reported before its commit, the commit queued, so that steps
 * depending on it can queue their start after it in the same group commit (never before it: a
 * later transaction at the earliest).
 */
export type StepEnd = ({ kind: 'settled'; written: Promise<unknown>; end: HeldEnd } & Outcome) | { kind: 'parked' };

const PARKED: StepEnd = { kind: 'parked' };

/** The `written` of a step whose transitions before its end need no commit of their own. */
const WRITTEN: Promise<unknown> = Promise.resolve();

/** Events a call emits before its step's start is committed: written right after the start. */
interface HeldEvents {
  open: boolean;
  events: NewEvent[];
}

export class StepRunner {
  /** Audit records waiting to be committed with the step's next transition (fewer commits). */
  private readonly pending = new Map<string, NewEvent[]>();
  /** The scope each step's shown arguments were resolved in, for the dispatch copy. */
  private readonly scopes = new WeakMap<object, ResolveScope>();
  /** Fingerprints by step (a plan's steps do not change; an edited plan brings new step objects). */
  private readonly prints = new WeakMap<PlanStep, string>();

  constructor(private readonly active: StepHost) {}

  private take(stepId: string): NewEvent[] {
    const events = this.pending.get(stepId) ?? [];
    this.pending.delete(stepId);
    return events;
  }

  private fingerprint(step: PlanStep): string {
    let f = this.prints.get(step);
    if (f === undefined) {
      f = fingerprint(step);
      this.prints.set(step, f);
    }
    return f;
  }

  private index(step: PlanStep): number {
    return this.active.indexOf(step.id);
  }

  /** The execution row's key: the step id, or `<stepId>#<iteration>` inside a forEach body. */
  private key(step: PlanStep): string {
    return this.active.rowKey ? this.active.rowKey(step.id) : step.id;
  }

  private clock(): number {
    return this.active.deps.clock.now();
  }

  async run(step: PlanStep): Promise<StepEnd> {
    try {
      return await this.runInner(step);
    } catch (err) {
      return this.settle(step, { ok: false, error: errorText(err) }, 0, this.clock(), this.active.now());
    }
  }

  private async runInner(step: PlanStep): Promise<StepEnd> {
    const r = this.active;
    if (step.pinned) {
      await r.commit([{ type: 'step_start', stepId: step.id, index: this.index(step), title: step.title, tool: step.tool, attempt: 0, pinned: true, ...r.frame }]);
      return this.settle(step, { ok: true, result: step.pinned.result }, 0, this.clock(), this.active.now());
    }
    let args: Record<string, unknown>;
    let instruction = step.instruction ?? '';
    let scope: ResolveScope;
    try {
      scope = this.scope(step);
      args = resolveArguments(step, scope);
      if (!step.tool) instruction = String(resolveValue(instruction, scope));
    } catch (err) {
      const msg = err instanceof UnresolvedReferenceError ? localize(err.text.$message, err.text.params) : err instanceof ShellTemplateError ? err.message : errorText(err);
      return this.settle(step, { ok: false, error: msg }, 0, this.clock(), this.active.now());
    }
    const tool = step.tool ? r.catalog.get(step.tool) : undefined;
    if (step.tool && !tool) return this.settle(step, { ok: false, error: `tool "${step.tool}" is not in the catalog` }, 0, this.clock(), this.active.now());
    // a write-only value a workflow did not keep is not given, never sent as the marker
    if (tool) args = dropRedactedSecrets(args, tool.inputSchema);
    // dispatch resolves the template again in the same scope, with the secrets' values
    this.scopes.set(args, scope);
    let gateReason = needsStepGate(step, r.config);
    if (tool) {
      const decision = await this.check(step, tool, args);
      if (decision.decision === 'deny') {
        return this.settle(step, { ok: false, error: `permission denied for "${tool.name}": ${decision.reason}` }, 0, this.clock(), this.active.now());
      }
      if (decision.decision === 'ask') gateReason = decision.reason;
    }
    let approved = r.config.permissionMode === 'full-access' || !gateReason;
    if (gateReason) {
      const audits = this.take(step.id);
      if (audits.length) await r.commit(audits);
      const outcome = await r.stepGate(step.id, gateReason, { tool: step.tool, arguments: redactSecrets(args, tool?.inputSchema), effect: tool?.effect ?? 'model' });
      if (outcome.kind === 'cancelled' || r.cancelRequested()) return PARKED;
      if (outcome.kind === 'rejected') return this.settle(step, { ok: false, error: outcome.reason }, 0, this.clock(), this.active.now());
      approved = true;
    }
    if (r.cancelRequested()) return PARKED;
    return this.execute(step, tool, args, instruction, approved);
  }

  private scope(step: PlanStep) {
    const r = this.active;
    return {
      stepIds: r.stepIds(),
      results: r.results,
      dependsOn: step.dependsOn ?? [],
      inputs: r.inputs,
      iteration: r.iteration,
      skipped: r.skipped,
      errors: r.failures,
      file: (name: string) => {
        const grant = r.grants.find((g) => g.name === name);
        if (!grant) throw new UnresolvedReferenceError(`@file:${name}`);
        return grant.path;
      },
    };
  }

  private async check(step: PlanStep, tool: Tool, args: Record<string, unknown>): Promise<GuardDecision> {
    const r = this.active;
    const call: ToolCall = { tool, arguments: args, owner: r.owner, permissionMode: r.config.permissionMode, caller: 'runner', runId: r.id, stepId: step.id };
    // the run's stop, not its signal: a signal is made only when a hook runs
    const decision = await r.deps.guard().check(call, r.stop);
    const audits: NewEvent[] = (decision.audits ?? []).map((a) => ({ type: 'audit', stepId: step.id, tool: tool.name, kind: 'hook', ...a }) as NewEvent);
    audits.push({ type: 'audit', kind: 'permission', stepId: step.id, tool: tool.name, decision: decision.decision, source: decision.source, ...(decision.rule ? { rule: decision.rule } : {}), reason: decision.reason });
    // Denials and gates are reported at once; an allowed call's audit rides with its step_start.
    if (decision.decision === 'allow') this.pending.set(step.id, audits);
    else await r.commit(audits);
    return decision;
  }

  private async execute(step: PlanStep, tool: Tool | undefined, args: Record<string, unknown>, instruction: string, approved: boolean): Promise<StepEnd> {
    const r = this.active;
    const started = this.clock();
    const startedAt = r.now();
    const maxAttempts = tool && isRetrySafe(tool) ? (step.retry?.maxAttempts ?? 1) : 1;
    let delay = step.retry?.initialBackoffMs ?? 500;
    // A call that may take effect starts only once its start is durable (a host that dies during
    // it finds the step running, hence uncertain). A retry-safe call is made first and overlaps
    // the start's commit (a worker process starts on it while the start is written): its later
    // commits (retry, end) are queued after the start, in the same group commit or a later one,
    // and a failed start fails them (they are never written without it). Events the tool emits
    // before the start's commit is queued are held until then. The start's record is made once
    // the call has left (while the worker answers): it holds the arguments by reference either way.
    const overlap = tool !== undefined && isRetrySafe(tool);
    const held: HeldEvents | undefined = overlap ? { open: false, events: [] } : undefined;
    const turn = r.deps.events.turn;
    let calledIn = turn.ended;
    const first = overlap && tool ? this.invoke(step, tool, args, approved, held) : undefined;
    // a worker's request leaves in a promise job queued as it is sent: let it go before the commit
    if (first) await Promise.resolve();
    const { events: startEvents, row: startRow } = this.startRecord(step, tool, args, startedAt);
    // the start of a call that has left may wait for a later turn's commits (it holds no effect)
    const startWritten = first ? r.commitQueued(startEvents, { status: r.liveStatus() }, startRow, true) : r.commit(startEvents, { status: r.liveStatus() }, startRow);
    let startFailure: { err: unknown } | undefined;
    if (!held) await startWritten;
    else {
      startWritten.catch((err) => {
        startFailure = { err };
      });
      held.open = true;
      if (held.events.length) void r.commit(held.events.splice(0));
    }
    let outcome: Outcome = { ok: false, error: 'not run' };
    let tail: NewEvent[] = [];
    let attempt = 1;
    for (; attempt <= maxAttempts; attempt++) {
      if (tool) {
        if (attempt > 1) await r.commit([callEvent(step, tool, args, r.frame)]);
        if (attempt > 1) calledIn = turn.ended;
        outcome = await (attempt === 1 && first ? first : this.invoke(step, tool, args, approved));
        tail = [outcome.ok ? toolResult(step.id, tool.name, outcome, r.frame) : { type: 'tool', phase: 'result', stepId: step.id, name: tool.name, error: outcome.error, ...keptField(outcome), ...r.frame }];
      } else outcome = await this.modelStep(step, instruction);
      if (startFailure) throw startFailure.err;
      if (outcome.ok || r.cancelRequested() || attempt === maxAttempts) break;
      await r.commit([...tail, { type: 'step_retry', stepId: step.id, attempt: attempt + 1, delayMs: delay, error: outcome.error }]);
      tail = [];
      if (!(await sleep(delay, r.stop))) break;
      delay *= 2;
    }
    // The end is queued, whether the answer came at once (a built-in tool) or in a later turn (a
    // worker's): the next step's start joins it in one group commit at the end of this turn (a
    // chain's steps of one slice share one transaction), and the next step's call (when
    // retry-safe) leaves before that commit is written. The end of a retry-safe call answered in
    // a later turn is held: the next answers, each in its own turn, join it for up to a slice. A
    // run's first end is neither held nor left for its turn's end; its next step starts once it is out.
    const queue = r.settledSteps === 0 ? undefined : overlap && turn.ended !== calledIn ? 'held' : 'turn';
    const end = this.settle(step, outcome, Math.min(attempt, maxAttempts), started, startedAt, tail, queue, startWritten);
    if (tool) await this.observe(step, tool, args, outcome, end.end);
    return end;
  }

  /** A step's start: its events (the allowed call's audits, step_start, the call) and its running row. */
  private startRecord(step: PlanStep, tool: Tool | undefined, args: Record<string, unknown>, startedAt: string): { events: NewEvent[]; row: StepRow } {
    const events: NewEvent[] = [
      ...this.take(step.id),
      { type: 'step_start', stepId: step.id, index: this.index(step), title: step.title, tool: step.tool, arguments: redactSecrets(args, tool?.inputSchema), attempt: 1, ...this.active.frame },
      ...(tool ? [callEvent(step, tool, args, this.active.frame)] : []),
    ];
    const row: StepRow = { run_id: this.active.id, step_id: this.key(step), status: 'running', attempts: 1, result: null, error: null, started_at: startedAt, finished_at: null, duration_ms: null, fingerprint: this.fingerprint(step), reused: 0 };
    return { events, row };
  }

  private async invoke(step: PlanStep, tool: Tool, args: Record<string, unknown>, approved: boolean, held?: HeldEvents): Promise<Outcome> {
    const r = this.active;
    const seconds = tool.timeoutSeconds ?? (await r.deps.callTimeoutSeconds(r.owner));
    // no AbortController unless the tool reads `signal`: a worker's call is told through `abort`
    const call = new CallScope(r.stop, step.timeoutMs ?? seconds * 1000);
    const secrets = r.deps.secrets?.view(r.owner);
    const record = (e: NewEvent) => {
      if (held && !held.open) held.events.push(e);
      else void r.commit([e]);
    };
    const ctx = new StepCallContext(call, r, step.id, approved, (type, payload) => record({ type, stepId: step.id, ...payload } as NewEvent), (p) => record({ type: 'audit', kind: 'progress', stepId: step.id, tool: tool.name, ...p }));
    let outcome: Outcome;
    try {
      // a run stopped while the permission check ran never starts the call
      if (call.aborted) throw call.reason;
      // `{{secrets.NAME}}` becomes its value only here, in the arguments handed to the tool
      const hidden = secretInputsFor(step, r, r.deps.secrets);
      const result = await raceAbort(tool.invoke(dispatchArguments(step, args, this.scopes.get(args) ?? this.scope(step), secrets, (s) => dropRedactedSecrets(resolveArguments(step, s), tool.inputSchema), hidden), ctx), call);
      if (result && typeof result === 'object' && (result as { success?: unknown }).success === false) {
        const e = (result as { error?: unknown }).error;
        outcome = { ok: false, error: typeof e === 'string' ? e : JSON.stringify(e ?? 'the tool reported failure') };
      } else outcome = { ok: true, result: result ?? null, json: undefined };
    } catch (err) {
      if (call.timedOut && !r.stop.aborted) outcome = timeoutOutcome(step, new FengYuError('tool_timeout', { name: tool.name, seconds }));
      else if (r.stop.aborted) outcome = { ok: false, error: errorText(new FengYuError('tool_cancelled', { name: tool.name })) };
      else outcome = isFengYuError(err) ? { ok: false, error: errorText(err), code: err.code, kept: keptResult(err) } : { ok: false, error: `${tool.name}: ${errorText(err)}` };
    } finally {
      call.dispose();
    }
    // a secret's value echoed by the tool is hidden before anything stores or streams it
    if (secrets) outcome = redactOutcome(outcome, secrets.redactions);
    if (outcome.ok) {
      const json = jsonOf(outcome.result);
      if (json === undefined || tooLarge(json)) outcome = { ok: false, error: `result of "${tool.name}" exceeds ${MAX_RESULT_BYTES} bytes` };
      else outcome.json = json;
    }
    return outcome;
  }

  private async modelStep(step: PlanStep, instruction: string): Promise<Outcome> {
    const r = this.active;
    const runner = r.deps.modelSteps;
    if (!runner) return { ok: false, error: errorText(new FengYuError('no_chat_backend')) };
    // a step timeout bounds the model call like a tool's: its own scope, aborted on expiry
    const call = step.timeoutMs === undefined ? undefined : new CallScope(r.stop, step.timeoutMs);
    try {
      const running = runner.run({
        owner: r.owner,
        runId: r.id,
        step,
        instruction,
        backend: r.config.backend,
        model: r.config.model,
        catalog: r.catalog,
        guard: r.deps.guard(),
        permissionMode: r.config.permissionMode,
        grants: r.grants,
        signal: call ? call.signal : r.signal,
        emit: (type, payload) => void r.commit([{ type, stepId: step.id, ...payload } as NewEvent]),
        askApproval: async (reason, detail) => (await r.stepGate(step.id, reason, detail)).kind === 'approved',
      });
      const result = await (call ? raceAbort(running, call) : running);
      return { ok: true, result: result ?? null };
    } catch (err) {
      if (call?.timedOut && !r.stop.aborted) return timeoutOutcome(step, err);
      return isFengYuError(err) ? { ok: false, error: errorText(err), code: err.code } : { ok: false, error: errorText(err) };
    } finally {
      call?.dispose();
    }
  }

  private async observe(step: PlanStep, tool: Tool, args: Record<string, unknown>, outcome: Outcome, end: HeldEnd): Promise<void> {
    const r = this.active;
    const guard = r.deps.guard();
    if (!guard.observe) return;
    try {
      const call: ToolCall = { tool, arguments: args, owner: r.owner, permissionMode: r.config.permissionMode, caller: 'runner', runId: r.id, stepId: step.id };
      const audits = await guard.observe(call, outcome.ok ? { ok: true, result: outcome.result } : { ok: false, error: outcome.error });
      if (audits.length) {
        // the audits of what the call did follow the step's end in the log
        void end.write();
        await r.commit(audits.map((a) => ({ type: 'audit', kind: 'hook', stepId: step.id, tool: tool.name, ...a }) as NewEvent));
      }
    } catch (err) {
      r.deps.logger.warn({ runId: r.id, stepId: step.id, err }, 'post tool hooks failed');
    }
  }

  /**
   * The step's end (event + execution row), held for the caller to commit, and how it went. The
   * row keeps the instant the step started (`startedAt`), whether or not its start was written as
   * a row of its own. `queue`: the end goes to the group commit at the end of the turn it is
   * written in, or (`held`) possibly of a later one (see `commitQueued`).
   */
  private settle(step: PlanStep, outcome: Outcome, attempts: number, started: number, startedAt: string, before: NewEvent[] = [], queue?: 'turn' | 'held', written: Promise<unknown> = WRITTEN): StepEnd & { kind: 'settled' } {
    const r = this.active;
    const durationMs = this.clock() - started;
    const status = outcome.ok ? 'done' : 'failed';
    const events: NewEvent[] = [
      ...this.take(step.id),
      ...before,
      outcome.ok
        ? stepComplete(step.id, this.index(step), attempts, durationMs, outcome, r.frame)
        : { type: 'step_complete', stepId: step.id, index: this.index(step), status, error: outcome.error, attempts, durationMs, ...r.frame },
    ];
    const row: StepRow = {
      run_id: r.id,
      step_id: this.key(step),
      status,
      attempts,
      result: outcome.ok ? (outcome.json ?? JSON.stringify(outcome.result ?? null)) : keptJson(outcome),
      error: outcome.ok ? null : outcome.error,
      started_at: startedAt,
      finished_at: r.now(),
      duration_ms: durationMs,
      fingerprint: this.fingerprint(step),
      reused: 0,
    };
    const end = new HeldEnd(r, events, row, queue);
    // an end is written at once unless its caller writes it (with the run's end, or an iteration's progress)
    if (!r.holdsEnd(step.id, outcome.ok)) void end.write();
    // one shape per kind of outcome (a spread of the outcome would make one per outcome's shape)
    return outcome.ok ? { kind: 'settled', ok: true, result: outcome.result, json: outcome.json, written, end } : { kind: 'settled', ok: false, error: outcome.error, code: outcome.code, written, end };
  }
}

/**
 * The failure of an attempt whose deadline passed: `step_timeout` when the step set its own
 * `timeoutMs`, else the tool's own timeout error (`fallback`).
 */
function timeoutOutcome(step: PlanStep, fallback: unknown): Outcome & { ok: false } {
  const err = step.timeoutMs === undefined ? fallback : new FengYuError('step_timeout', { stepId: step.id, timeoutMs: step.timeoutMs });
  return { ok: false, error: errorText(err), ...(isFengYuError(err) ? { code: err.code } : {}) };
}

/** Waits `ms`: true, or false at once when `stop` aborts first. */
function sleep(ms: number, stop: AbortWatch): Promise<boolean> {
  return new Promise((resolve) => {
    if (stop.aborted) return resolve(false);
    const t = setTimeout(() => {
      detach();
      resolve(true);
    }, ms);
    const detach = stop.onAbort(() => {
      clearTimeout(t);
      resolve(false);
    });
  });
}

/**
 * A tool that ignores its signal still cannot hold the run: the call settles on abort. The tool's
 * own promise always gets a handler, so its late rejection is never an unhandled one.
 */
function raceAbort<T>(p: Promise<T>, call: CallScope): Promise<T> {
  if (call.aborted) {
    p.catch(() => undefined);
    return Promise.reject(call.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const detach = call.onAbort(() => reject(call.reason ?? new Error('aborted')));
    p.then(
      (v) => {
        detach();
        resolve(v);
      },
      (e) => {
        detach();
        reject(e);
      },
    );
  });
}

