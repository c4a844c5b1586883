import { type AgentPlan, FengYuError, FOREACH_DEFAULT_MAX_ITEMS, MAX_RUN_EXECUTIONS, type PlanStep, resolveValue, stepKind, UnresolvedReferenceError, localize } from '@fengyu/protocol';
import type { NewEvent } from '../events/event-log';
import { BodyHost } from './body-host';
import { type FailedSteps, failureOf, handlesFailure } from './failed-steps';
import { type InputHost, runInputStep } from './input-step';
import { portOf, runCondition, scopeOf } from './condition-step';
import type { DoneStep, RunAction, RunInput, StepNode } from './run-reducer';
import { errorText, fingerprint } from './run-text';
import type { StepHost } from './run-types';
import { iterationKey, type StepExecution, type StepRow } from './run.repository';
import { stepComplete } from './step-events';
import type { HeldEnd } from './step-runner';
import { presetResultJson } from '../tools/result-json';

/**
 * The effects of control flow that the run executor performs for the reducer: run a
 * condition, start a forEach (resolve and check its items), run the body steps of an iteration
 * (reusing finished ones), record skipped steps, report loop progress, and settle a loop with
 * the array of each iteration's last body step result. Each effect commits before it reports.
 */

/** What the reducer needs of a plan: each step's edges and join, and each forEach's body and concurrency. */
export const planNodes = (plan: { steps: readonly PlanStep[] }): StepNode[] =>
  plan.steps.map((s) => ({ id: s.id, dependsOn: s.dependsOn ?? [], ...(s.join ? { join: s.join } : {}), ...(s.onError && s.onError !== 'fail' ? { onError: s.onError } : {}), ...(s.steps ? { body: planNodes({ steps: s.steps }), concurrency: s.concurrency ?? 1 } : {}) }));

/** Reused steps for the reducer, each with the port it took (a reused condition's branch). */
export function doneSteps(plan: AgentPlan, ids: readonly string[], results: ReadonlyMap<string, unknown>): DoneStep[] {
  return ids.map((id) => {
    const port = portOf(plan.steps.find((s) => s.id === id), results.get(id));
    return port ? { id, port } : id;
  });
}

/** What the flow effects need of their run (implemented by the run executor). */
export interface FlowHost extends StepHost {
  readonly plan?: AgentPlan;
  readonly results: Map<string, unknown>;
  readonly skipped: Set<string>;
  /** Completed executions of an earlier run that may be reused, by `<stepId>` or `<stepId>#<iteration>`. */
  readonly reuse: ReadonlyMap<string, StepExecution>;
  /** A new run (its reused executions are recorded anew); a resumed run already has them. */
  readonly fresh: boolean;
  recordError(stepId: string, error: string, code?: string): void;
  /** The failures the run went past (body steps add theirs with their iteration). */
  readonly failed: FailedSteps;
  dispatch(input: RunInput): void;
  /** The actions `input` would lead to now; dispatching it next reuses that reduction. */
  preview(input: RunInput): readonly RunAction[];
  failWith(err: unknown): void;
  hasEnded(): boolean;
  /** Where an input step opens its gate. */
  readonly gates: InputHost['gates'];
}

/**
 * A forEach in flight: its items, the open iterations' hosts, the results per item (with their JSON
 * text when a body step made it), the iterations whose progress went with their last body step's
 * end, the first failure.
 */
interface LoopRun {
  step: PlanStep;
  items: unknown[];
  hosts: Map<number, BodyHost>;
  results: unknown[];
  texts: (string | undefined)[];
  progressed: Set<number>;
  lastBodyId: string;
  started: number;
  startedAt: string;
  error?: string;
}

export class FlowEffects {
  private readonly loops = new Map<string, LoopRun>();
  /** Step executions this run may still make at most (top-level steps, plus each started loop's iterations × body). */
  private planned = 0;

  constructor(private readonly run: FlowHost) {}

  /** A (new) plan: every top-level step may run once. */
  plannedFor(plan: AgentPlan): void {
    this.planned = plan.steps.length;
  }

  /** Performs a control-flow action; false when the action is not one of them. */
  perform(action: RunAction): boolean {
    switch (action.type) {
      case 'skip_steps':
        void this.skip(action.stepIds, action.loopId, action.iteration);
        return true;
      case 'start_body':
        for (const id of action.stepIds) void this.runBody(action.loopId, action.iteration, id);
        return true;
      case 'iteration_done':
        this.iterationDone(action);
        return true;
      case 'loop_done':
        void this.finishLoop(action.loopId, action.ok, action.cancelled);
        return true;
      default:
        return false;
    }
  }

  /** Starts a top-level condition, forEach or input step; false for other kinds (the step runner runs those). */
  start(step: PlanStep): boolean {
    const kind = stepKind(step);
    if (kind === 'condition') {
      void this.topCondition(step);
      return true;
    }
    if (kind === 'forEach') {
      void this.startLoop(step);
      return true;
    }
    if (kind === 'input') {
      void runInputStep(this.run, step);
      return true;
    }
    return false;
  }

  /**
   * A top-level condition. Like a tool step's end (run-executor `settle`), its dependents start
   * before its commit is written — their commits queue after it — unless other runs have commits
   * queued, when it waits for its own first (each run one step per turn). A run of conditions
   * lets the loop turn after a slice of work, as steps do.
   */
  private async topCondition(step: PlanStep): Promise<void> {
    const r = this.run;
    try {
      const turn = r.deps.events.turn.yieldIfLong();
      if (turn) await turn;
      if (r.hasEnded()) return;
      const end = await runCondition(r, step);
      if (r.hasEnded()) return;
      if (r.deps.events.queuedByOthers(r.id)) await end.written;
      if (r.hasEnded()) return;
      if (end.ok) r.results.set(step.id, { branch: end.branch });
      else r.recordError(step.id, end.error);
      r.dispatch({ type: 'step_settled', stepId: step.id, ok: end.ok, ...(end.ok ? { port: end.branch } : {}) });
      await end.written;
    } catch (err) {
      if (!r.hasEnded()) r.failWith(err);
    }
  }

  /** The loop's items, or why it fails before any iteration. */
  private itemsOf(step: PlanStep): { items: unknown[] } | { error: string } {
    let items: unknown;
    try {
      items = Array.isArray(step.items) ? step.items : resolveValue(step.items, scopeOf(this.run, step));
    } catch (err) {
      return { error: err instanceof UnresolvedReferenceError ? localize(err.text.$message, err.text.params) : errorText(err) };
    }
    if (!Array.isArray(items)) return { error: errorText(new FengYuError('foreach_items_not_array', { stepId: step.id })) };
    const max = step.maxItems ?? FOREACH_DEFAULT_MAX_ITEMS;
    if (items.length > max) return { error: errorText(new FengYuError('foreach_too_many_items', { stepId: step.id, count: items.length, max })) };
    const more = items.length * (step.steps?.length ?? 0);
    if (this.planned + more > MAX_RUN_EXECUTIONS) return { error: errorText(new FengYuError('run_too_many_executions', { max: MAX_RUN_EXECUTIONS })) };
    return { items };
  }

  private async startLoop(step: PlanStep): Promise<void> {
    const r = this.run;
    const started = r.deps.clock.now();
    const startedAt = r.now();
    const index = r.indexOf(step.id);
    const got = this.itemsOf(step);
    try {
      if ('error' in got) {
        r.recordError(step.id, got.error);
        await r.commit(
          [
            { type: 'step_start', stepId: step.id, index, title: step.title, attempt: 1 },
            { type: 'step_complete', stepId: step.id, index, status: 'failed', error: got.error, attempts: 1, durationMs: 0 },
          ],
          { status: r.liveStatus() },
          this.row(step.id, step, 'failed', null, got.error, startedAt, 0),
        );
        return r.dispatch({ type: 'step_settled', stepId: step.id, ok: false });
      }
      const items = got.items;
      this.planned += items.length * (step.steps?.length ?? 0);
      const body = step.steps ?? [];
      this.loops.set(step.id, { step, items, hosts: new Map(), results: new Array(items.length).fill(null), texts: new Array(items.length), progressed: new Set(), lastBodyId: (body[body.length - 1] as PlanStep).id, started, startedAt });
      await r.commit([{ type: 'step_start', stepId: step.id, index, title: step.title, attempt: 1, total: items.length }], { status: r.liveStatus() }, this.row(step.id, step, 'running', null, null, startedAt, null));
      if (r.hasEnded()) return;
      r.dispatch({ type: 'loop_started', stepId: step.id, total: items.length });
    } catch (err) {
      if (!r.hasEnded()) r.failWith(err);
    }
  }

  private host(loop: LoopRun, iteration: number): BodyHost {
    let host = loop.hosts.get(iteration);
    if (!host) {
      host = new BodyHost(this.run, loop.step, loop.items[iteration], iteration);
      loop.hosts.set(iteration, host);
    }
    return host;
  }

  private async runBody(loopId: string, iteration: number, stepId: string): Promise<void> {
    const r = this.run;
    const loop = this.loops.get(loopId);
    const step = loop?.step.steps?.find((s) => s.id === stepId);
    if (!loop || !step || r.hasEnded()) return;
    const host = this.host(loop, iteration);
    let held: HeldEnd | undefined;
    const settled = (ok: boolean, result: unknown, error?: string, port?: string, code?: string) => {
      if (ok) host.own.set(stepId, result);
      else if (handlesFailure(step)) {
        // the iteration goes on past it: null result, its error readable in this iteration
        const failure = failureOf(error ?? '', code);
        host.own.set(stepId, null);
        host.ownFailures.set(stepId, failure);
        r.failed.add(stepId, failure, iteration);
      } else loop.error ??= `Step "${stepId}" (iteration ${iteration}) failed: ${error}`;
      const input: RunInput = { type: 'body_settled', loopId, iteration, stepId, ok, ...(port ? { port } : {}) };
      if (held) this.writeEnd(loop, held, r.preview(input));
      r.dispatch(input);
    };
    try {
      const turn = r.deps.events.turn.yieldIfLong();
      if (turn) await turn;
      if (r.hasEnded()) return;
      if (r.cancelRequested()) return r.dispatch({ type: 'body_parked', loopId, iteration, stepId });
      const prior = r.reuse.get(iterationKey(stepId, iteration));
      if (prior?.status === 'done' && this.finished(loop, iteration)) {
        await this.reuseBody(host, step, prior);
        return settled(true, prior.result, undefined, portOf(step, prior.result));
      }
      if (stepKind(step) === 'condition') {
        const end = await runCondition(host, step);
        if (r.hasEnded()) return;
        if (end.ok) settled(true, { branch: end.branch }, undefined, end.branch);
        else settled(false, undefined, end.error);
        await end.written;
        return;
      }
      const end = await host.runner.run(step);
      if (end.kind === 'settled') held = end.end;
      if (r.hasEnded()) return void held?.write();
      if (end.kind === 'parked') return r.dispatch({ type: 'body_parked', loopId, iteration, stepId });
      if (end.ok && stepId === loop.lastBodyId) host.lastJson = end.json;
      if (end.ok) settled(true, end.result);
      else settled(false, undefined, end.error, undefined, end.code);
      await Promise.all([end.written, end.end.written]);
    } catch (err) {
      // a body step's end is written by the loop (`BodyHost.holdsEnd`), whatever happens after it settled
      if (held && !held.written) void held.write();
      if (!r.hasEnded()) r.failWith(err);
    }
  }

  /**
   * Writes a body step's end before its settle is dispatched (what the settle starts commits after
   * it). When the settle ends its iteration, and skips nothing first, the iteration's
   * `loop_progress` goes in the same commit, after the end: one commit per finished iteration.
   */
  private writeEnd(loop: LoopRun, held: HeldEnd, actions: readonly RunAction[]): void {
    const first = actions[0];
    if (first?.type !== 'iteration_done') return void held.write();
    loop.progressed.add(first.iteration);
    void held.write([progressEvent(first)]);
  }

  /**
   * Whether an earlier run finished iteration `i` of this loop: every body step ended there, done
   * (unchanged) or skipped. Only a finished iteration is reused; a partial one runs again whole.
   */
  private finished(loop: LoopRun, i: number): boolean {
    return (loop.step.steps ?? []).every((b) => {
      const p = this.run.reuse.get(iterationKey(b.id, i));
      return p?.status === 'skipped' || (p?.status === 'done' && p.fingerprint === fingerprint(b));
    });
  }

  /** A finished body step of an earlier run, carried over: recorded anew in a new run (a resumed run has its row). */
  private async reuseBody(host: BodyHost, step: PlanStep, prior: StepExecution): Promise<void> {
    if (!this.run.fresh) return;
    const event: NewEvent = { type: 'step_complete', stepId: step.id, index: host.indexOf(step.id), status: 'done', result: prior.result, attempts: prior.attempts, durationMs: 0, reused: true, ...host.frame };
    const row = { ...this.row(host.rowKey(step.id), step, 'done', JSON.stringify(prior.result ?? null), null, prior.startedAt ?? null, prior.durationMs ?? null), attempts: prior.attempts, finished_at: prior.finishedAt ?? null, reused: 1 };
    await host.commitQueued([event], undefined, row);
  }

  /** Records skipped steps: `step_complete {status: "skipped"}` and an execution row each, in one commit. */
  private async skip(stepIds: string[], loopId?: string, iteration?: number): Promise<void> {
    const r = this.run;
    const loop = loopId ? this.loops.get(loopId) : undefined;
    const host: StepHost & { ownSkipped?: Set<string> } = loop && iteration !== undefined ? this.host(loop, iteration) : r;
    const set = loop && iteration !== undefined ? (host as BodyHost).ownSkipped : r.skipped;
    const events: NewEvent[] = [];
    const rows: StepRow[] = [];
    const now = r.now();
    for (const id of stepIds) {
      set.add(id);
      events.push({ type: 'step_complete', stepId: id, index: host.indexOf(id), status: 'skipped', attempts: 0, durationMs: 0, ...host.frame });
      rows.push({ ...this.row(host.rowKey ? host.rowKey(id) : id, undefined, 'skipped', null, null, null, 0), attempts: 0, finished_at: now });
    }
    try {
      if (rows.length === 1) await r.commitQueued(events, undefined, rows[0]);
      else
        await r.commit(events, undefined, async (trx) => {
          for (const row of rows) await r.deps.repo.upsertStep(row, trx);
        });
    } catch (err) {
      if (!r.hasEnded()) r.failWith(err);
    }
  }

  /**
   * One iteration ended: keep its last body step's result (null when skipped) and its JSON text, and
   * report progress (unless it went with the last body step's end: `writeEnd`).
   */
  private iterationDone(action: Extract<RunAction, { type: 'iteration_done' }>): void {
    const { loopId, iteration } = action;
    const loop = this.loops.get(loopId);
    if (!loop) return;
    const host = loop.hosts.get(iteration);
    loop.results[iteration] = host?.own.get(loop.lastBodyId) ?? null;
    // the text is the result's only when the last body step ended done with it (`runBody`)
    if (host?.lastJson !== undefined && host.own.has(loop.lastBodyId)) loop.texts[iteration] = host.lastJson;
    loop.hosts.delete(iteration);
    if (loop.progressed.delete(iteration)) return;
    void this.run.commitQueued([progressEvent(action)]).catch(() => undefined);
  }

  /** Every iteration ended (or the loop stopped): the loop step ends with its result array, or fails. */
  private async finishLoop(loopId: string, ok: boolean, cancelled: boolean): Promise<void> {
    const r = this.run;
    const loop = this.loops.get(loopId);
    if (!loop) return;
    this.loops.delete(loopId);
    const { step } = loop;
    const index = r.indexOf(step.id);
    const durationMs = r.deps.clock.now() - loop.started;
    const error = ok ? undefined : (loop.error ?? (cancelled ? 'cancelled before the next iteration' : 'the loop stopped'));
    // the array's text is made of each iteration's result text, not serialized again (row, event and run result share it)
    const json = ok ? `[${loop.results.map((v, i) => loop.texts[i] ?? JSON.stringify(v ?? null)).join(',')}]` : null;
    if (json !== null) presetResultJson(loop.results, json);
    try {
      await r.commit(
        [
          json !== null
            ? stepComplete(step.id, index, 1, durationMs, { ok: true, result: loop.results, json }, undefined)
            : { type: 'step_complete', stepId: step.id, index, status: 'failed', error, attempts: 1, durationMs },
        ],
        undefined,
        this.row(step.id, step, ok ? 'done' : 'failed', json, error ?? null, loop.startedAt, durationMs),
      );
      if (r.hasEnded()) return;
      if (ok) r.results.set(step.id, loop.results);
      else r.recordError(step.id, error as string);
      r.dispatch({ type: 'step_settled', stepId: step.id, ok });
    } catch (err) {
      if (!r.hasEnded()) r.failWith(err);
    }
  }

  private row(key: string, step: PlanStep | undefined, status: StepRow['status'], result: string | null, error: string | null, startedAt: string | null, durationMs: number | null): StepRow {
    const finished = status === 'running' ? null : this.run.now();
    return { run_id: this.run.id, step_id: key, status, attempts: 1, result, error, started_at: startedAt, finished_at: finished, duration_ms: durationMs, fingerprint: step ? fingerprint(step) : null, reused: 0 };
  }
}

/** The `loop_progress` event of an iteration that ended. */
function progressEvent(a: Extract<RunAction, { type: 'iteration_done' }>): NewEvent {
  return { type: 'loop_progress', stepId: a.loopId, done: a.done, total: a.total, iteration: a.iteration };
}
