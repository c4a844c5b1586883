import { type AgentPlan, FengYuError, type PlanStep, type RunStatus, type StepFailure } from '@fengyu/protocol';
import { FailedSteps, failureOf } from './failed-steps';
import { insertOutbox } from './error-outbox.repository';
import { isoTime } from '../clock';
import type { NewEvent, Trx } from '../events/event-log';
import type { CatalogSnapshot } from '../tools/catalog';
import { Stop } from '../tools/call-scope';
import type { FileGrant } from '../tools/tool';
import type { AlsoWrite, GateOutcome, OpenGate } from './gates';
import { draftPlan } from './plan-draft';
import { doneSteps, FlowEffects, type FlowHost, planNodes as nodes } from './flow-effects';
import { reuseSteps } from './reuse';
import { RunGates } from './run-gates';
import { initialRunState, onlyGated, type GateTicket, type Reduction, type RunAction, type RunInput, type RunOutcome, type RunState, reduce, sameSettle } from './run-reducer';
import { handled, planRowText, redactPlan, restoreSecrets } from './run-text';
import type { ResolvedConfig, RunDeps, RunInit, StepHost } from './run-types';
import type { RunRow, StepExecution, StepRow } from './run.repository';
import { finishRun, planRejectedSummary, recordFailure, runEndHooks } from './run-finish';
import { type HeldEnd, type StepEnd, StepRunner } from './step-runner';

/**
 * The executor of one live run. It feeds what happens (a drafted plan, an approval, a settled
 * step, a cancel) to the pure `reduce` of `run-reducer.ts` and performs the actions it returns:
 * draft the plan, open a gate, start steps, finish. Every transition is committed to the event
 * log (with its projection) before anything reports it.
 */

interface PlanLookup {
  plan?: AgentPlan;
  ids: readonly string[];
  at: Map<string, number>;
}

export class ActiveRun implements StepHost, FlowHost {
  readonly id: string;
  readonly owner: string;
  readonly goal?: string;
  plan?: AgentPlan;
  readonly config: ResolvedConfig;
  readonly inputs: Record<string, unknown>;
  readonly grants: FileGrant[];
  readonly catalog: CatalogSnapshot;
  readonly results = new Map<string, unknown>();
  /** Top-level steps that were skipped (their references read null / ""). */
  readonly skipped = new Set<string>();
  readonly ended: Promise<RunStatus>;
  /** Failures this run went past (`onError`): `failedSteps`, and what `{{node.<id>.error}}` reads. */
  readonly failed = new FailedSteps();
  readonly failures: ReadonlyMap<string, StepFailure> = this.failed.errors;
  readonly reuse: ReadonlyMap<string, StepExecution>;
  readonly fresh: boolean;
  /** The summary a cancelled run ends with (a rejected plan's reason). */
  cancelSummary?: string;
  /** Cancel, shutdown or a failed creation: tells the run's calls; a real signal only when one is read. */
  readonly stop = new Stop();
  readonly gates: RunGates;
  private readonly steps: StepRunner;
  private readonly flow: FlowEffects;
  private state: RunState;
  private status: RunStatus = 'running';
  private closed = false;
  /** The status this run's row was last given by a commit of this executor (undefined: not yet). */
  private rowStatus?: RunStatus;
  /** Steps of this run started and not yet settled or parked; steps settled by this executor. */
  private inFlight = 0;
  settledSteps = 0;
  private failure?: unknown;
  /** The first commit of this run that failed: the run fails, and nothing after it is written. */
  private writeFailed?: { err: unknown };
  private resolveEnd!: (s: RunStatus) => void;
  /** The last step's end held for the run's end commit while that end is being decided. */
  private heldEnd?: HeldEnd;
  /** The creating commit is queued in this turn: the steps the run begins with join it. */
  private joining = false;
  /** Set while `begin` hands the plan to the reducer (the steps started then are the first ones). */
  private beginning = false;
  /** The plan's step ids and positions (`lookup`). */
  private planLookup?: PlanLookup;
  /** The last reduction of a step's settle, with the state and settle it was made from (`reduced`). */
  private lastSettle?: { from: RunState; input: RunInput; next: Reduction };

  constructor(
    readonly init: RunInit,
    readonly deps: RunDeps,
  ) {
    this.id = init.id;
    this.owner = init.owner;
    this.goal = init.goal;
    this.plan = init.plan;
    this.config = init.config;
    this.inputs = init.inputs;
    this.grants = init.grants;
    this.catalog = init.catalog;
    this.reuse = init.reuse;
    this.fresh = init.fresh;
    this.state = initialRunState(init.config.maxConcurrency, init.config.planApproval);
    // the row was created with the plan and the status `running` in the commit that announced it
    if (init.announced) this.rowStatus = 'running';
    this.steps = new StepRunner(this);
    this.flow = new FlowEffects(this);
    this.gates = new RunGates(this);
    this.ended = new Promise((r) => {
      this.resolveEnd = r;
    });
    if (init.created) {
      this.joining = true;
      // registered before any commit of the run: a failed creation stops the run before any of
      // its later commits (which fail with it) is seen to fail
      init.created.then(() => void (this.joining = false), () => this.abandon());
    }
  }

  get signal(): AbortSignal {
    return this.stop.signal;
  }

  /** A top-level step failed: the run's failure, or one its `onError` goes past (`failed-steps.ts`). */
  recordError(stepId: string, error: string, code?: string): void {
    this.failed.record(this.plan?.steps[this.lookup().at.get(stepId) ?? -1], stepId, error, code, this.results);
  }

  cancelRequested(): boolean {
    return this.state.cancelRequested;
  }

  liveStatus(): RunStatus {
    return this.state.gates.length ? this.status : 'running';
  }

  stepIds(): readonly string[] {
    return this.lookup().ids;
  }

  indexOf(stepId: string): number {
    return (this.lookup().at.get(stepId) ?? -1) + 1;
  }

  /** The plan's step ids and each id's position, made once per plan (a settle or a start looks a step up). */
  private lookup(): PlanLookup {
    const plan = this.plan;
    if (this.planLookup?.plan !== plan) {
      const ids = (plan?.steps ?? []).map((s) => s.id);
      this.planLookup = { plan, ids, at: new Map(ids.map((id, i) => [id, i])) };
    }
    return this.planLookup as PlanLookup;
  }

  now(): string {
    return isoTime(this.deps.clock.now());
  }

  /**
   * Commits events with an optional change of the run row and of one step's row, in one
   * transaction. On SQLite, while at most one step of this run is in flight the commit is written
   * at once unless another run committed in this turn of the event loop; otherwise it is grouped
   * with every other commit of the turn (other steps of this run, other runs) into one
   * transaction of prepared statements. On other dialects, and for a change given as a function,
   * it goes through Kysely.
   *
   * Once a commit of this run has failed, no later transition is written (the log never skips
   * one): every later commit is refused, except the record of the run's failure (`last`).
   */
  commit(events: NewEvent[], patch?: Partial<RunRow>, more?: AlsoWrite | StepRow, last = false, queue?: 'turn' | 'held'): Promise<unknown> {
    if (this.closed) return Promise.resolve();
    if (this.writeFailed && !last) return handled(Promise.reject(this.writeFailed.err));
    const written = this.write(events, patch, more, queue);
    // handled here (a caller may not wait for it); a failure fails the run at once, before any
    // other continuation of this turn can start a step or queue a transition after it
    written.catch((err) => this.onWriteFailure(err));
    return written;
  }

  commitQueued(events: NewEvent[], patch?: Partial<RunRow>, more?: StepRow, held = false): Promise<unknown> {
    return this.commit(events, patch, more, false, held ? 'held' : 'turn');
  }

  private onWriteFailure(err: unknown): void {
    if (this.writeFailed || this.closed) return;
    this.writeFailed = { err };
    if (!this.hasEnded()) this.failWith(err);
  }

  private write(events: NewEvent[], patch?: Partial<RunRow>, more?: AlsoWrite | StepRow, queue?: 'turn' | 'held'): Promise<unknown> {
    // A patch of the status alone that the row already holds is not written (a step start's):
    // rewriting the row (its plan included) would change nothing but updated_at.
    if (patch?.status !== undefined && patch.status === this.rowStatus && Object.keys(patch).length === 1) patch = undefined;
    if (patch?.status !== undefined) this.rowStatus = patch.status;
    const row = patch ? { ...patch, updated_at: this.now() } : undefined;
    const failure = row?.status === 'failed' ? { ...(this.failed.ending ?? failureOf(row.error ?? '', 'run_failed')), at: row.updated_at } : undefined;
    const repo = this.deps.repo;
    const slow = async (trx: Trx) => {
      if (row) await repo.update(this.id, row, trx);
      if (typeof more === 'function') await more(trx);
      else if (more) await repo.upsertStep(more, trx);
      if (failure) await insertOutbox(trx, this.id, failure);
    };
    const solo = !queue && this.inFlight <= 1;
    // another table's write goes through Kysely unless it has a prepared form (`AlsoWrite.raw`)
    const also = typeof more === 'function' ? more.raw : undefined;
    if (typeof more === 'function' && !also) return this.deps.events.commitGrouped(this.id, events, undefined, slow, solo);
    const raw = row || more ? repo.rawWrite({ runId: this.id, patch: row, steps: more && typeof more !== 'function' ? [more] : undefined, failure, also }) : undefined;
    return this.deps.events.commitGrouped(this.id, events, raw, raw ? slow : undefined, solo, queue === 'held');
  }

  /** Entry point: announce a supplied plan, apply reusable steps, and hand over to the reducer. */
  async begin(): Promise<void> {
    try {
      const plan = this.plan;
      if (!plan) return this.dispatch({ type: 'begin' });
      this.flow.plannedFor(plan);
      const announce: NewEvent[] = this.init.fresh && !this.init.announced ? [{ type: 'plan_ready', plan: redactPlan(plan, this.catalog) }] : [];
      if (this.config.planApproval) {
        if (announce.length) await this.commit(announce);
        return this.dispatch({ type: 'begin', steps: nodes(plan) });
      }
      const done = await reuseSteps(this, plan, this.init);
      if (announce.length) await this.commit(announce, { status: 'running', plan: planRowText(plan, this.catalog) });
      this.beginning = true;
      try {
        this.dispatch({ type: 'begin', steps: nodes(plan), done: doneSteps(plan, done, this.results) });
      } finally {
        this.beginning = false;
      }
    } catch (err) {
      this.failWith(err);
    }
  }

  dispatch(input: RunInput): void {
    const { state, actions } = this.reduced(input);
    this.state = state;
    for (const action of actions) this.perform(action);
  }

  /**
   * `reduce(this.state, input)`. A settle may be reduced ahead (does it end the run, or an
   * iteration: `holdsEnd`, `preview`), then dispatched: the reducer being pure, the dispatch of the
   * same state and settle gets the first reduction back instead of a second one.
   */
  private reduced(input: RunInput): Reduction {
    const memo = this.lastSettle;
    if (input.type !== 'step_settled' && input.type !== 'body_settled') return reduce(this.state, input);
    if (memo && memo.from === this.state && sameSettle(memo.input, input)) return memo.next;
    const next = reduce(this.state, input);
    this.lastSettle = { from: this.state, input, next };
    return next;
  }

  preview(input: RunInput): readonly RunAction[] {
    return this.reduced(input).actions;
  }

  private perform(action: RunAction): void {
    if (this.flow.perform(action)) return;
    switch (action.type) {
      case 'draft_plan':
        return void this.draft();
      case 'open_gate':
        return void this.gates.open(action.ticket);
      case 'cancel_gates':
        for (const t of action.tickets) this.gates.settle(t.key, { kind: 'cancelled' });
        return;
      case 'start_steps':
        for (const id of action.stepIds) {
          const step = this.plan?.steps[this.lookup().at.get(id) ?? -1];
          if (!step || !this.flow.start(step)) void this.runStep(id);
        }
        return;
      case 'finish':
        return void this.finish(action.outcome);
      case 'fail':
        return void this.recordFailure();
    }
  }

  failWith(err: unknown): void {
    this.failure = err;
    this.dispatch({ type: 'fail' });
  }

  private async draft(): Promise<void> {
    try {
      const plan = await draftPlan(this, () => this.state.phase === 'ended');
      if (!plan) return;
      this.plan = plan;
      this.flow.plannedFor(plan);
      this.dispatch({ type: 'plan_drafted', steps: nodes(plan) });
    } catch (err) {
      this.failWith(err);
    }
  }

  private async runStep(stepId: string): Promise<void> {
    const step = this.plan?.steps[this.lookup().at.get(stepId) ?? -1] as PlanStep;
    if (this.state.phase === 'ended') return;
    // Steps whose tools answer from memory and whose commits are written at once would run a
    // whole plan in one turn of the event loop: every run lets the loop turn after a slice of work.
    // The steps a run begins with in the turn of its creating commit start without waiting (they
    // join that commit; at most maxConcurrency of them); every later step keeps to the slices, but
    // after the run's first step end the loop turns at once, so a watcher sees the run move early.
    const turn = this.beginning && this.joining ? undefined : this.deps.events.turn.yieldIfLong(this.settledSteps === 1);
    if (turn) {
      await turn;
      // the run may have ended (cancel, failure, shutdown) while the loop turned
      if (this.hasEnded()) return;
    }
    if (this.writeFailed) return;
    if (this.state.cancelRequested) return this.dispatch({ type: 'step_parked', stepId });
    let end: Awaited<ReturnType<StepRunner['run']>>;
    this.inFlight += 1;
    try {
      end = await this.steps.run(step);
    } catch (err) {
      // A shutdown aborts calls mid-flight; after it nothing is recorded. Any other throw fails the run.
      if (this.closed || this.hasEnded()) return;
      return this.failWith(err);
    } finally {
      this.inFlight -= 1;
    }
    if (end.kind === 'parked') return this.dispatch({ type: 'step_parked', stepId });
    return this.settle(stepId, end);
  }

  /** Records a step's end: with the run's end when it ends the run, else before its dependents start. */
  private async settle(stepId: string, end: Extract<StepEnd, { kind: 'settled' }>): Promise<void> {
    const settled: RunInput = { type: 'step_settled', stepId, ok: end.ok };
    this.settledSteps += 1;
    const record = () => (end.ok ? this.results.set(stepId, end.result) : this.recordError(stepId, end.error, end.code));
    // When this end ends the run, the step's end and the run's end are one commit (a host that
    // dies leaves neither or both); the run's end is decided before the step's end is written.
    if (!end.end.written) {
      const next = this.endingReduction(settled);
      if (next) {
        record();
        this.state = next.state;
        return this.finish(next.outcome, end.end);
      }
    }
    const written = Promise.all([end.written, end.end.write()]);
    // Alone in this turn, the steps that depend on this one start at once: their start is queued
    // after this end, in the same group commit (a run's DAG levels share it). When other runs
    // have commits queued, the end is written first: each run then takes one step per turn, which
    // keeps the turns of a busy loop short (health checks and streams stay live). A held end (a
    // worker's answer) is not waited for: its commit may wait for later turns, and what follows
    // it is a call that leaves and waits, not a turn of work.
    const paced = end.end.queue !== 'held' && this.deps.events.queuedByOthers(this.id);
    if (paced) {
      try {
        await written;
      } catch {
        return; // the failed commit has failed the run
      }
    }
    record();
    this.dispatch(settled);
    try {
      await written;
    } catch (err) {
      if (!this.closed && !this.hasEnded()) this.failWith(err);
    }
  }

  holdsEnd(stepId: string, ok: boolean): boolean {
    return this.endingReduction({ type: 'step_settled', stepId, ok }) !== undefined;
  }

  /** The reduction of `input` when its only action is to finish the run (and this run may still write). */
  private endingReduction(input: RunInput): { state: RunState; outcome: RunOutcome } | undefined {
    if (this.writeFailed || this.closed) return undefined;
    const next = this.reduced(input);
    const only = next.actions.length === 1 ? next.actions[0] : undefined;
    return only?.type === 'finish' ? { state: next.state, outcome: only.outcome } : undefined;
  }

  /** Read through a method: the phase changes across awaits, which narrowing cannot see. */
  hasEnded(): boolean {
    return this.state.phase === 'ended';
  }

  /** Opens a step gate (or answers at once when this run may not pause). */
  stepGate(stepId: string, reason: string, detail: Record<string, unknown>): Promise<GateOutcome> {
    return this.gates.request(stepId, reason, detail);
  }

  /** The open gate's id (undefined when none is open or it has been answered). */
  openGateId(): string | undefined {
    return this.gates.openGateId();
  }

  queuedGates(): readonly GateTicket[] {
    return this.state.gates;
  }

  /** Nothing of the run moves until its open gate is answered (`onlyGated`): its host may let go of it. */
  waitsOnlyAtGate(): boolean {
    return !this.closed && !this.heldEnd && !this.writeFailed && onlyGated(this.state) && this.gates.openGateId() !== undefined;
  }

  setStatus(status: RunStatus): void {
    this.status = status;
  }

  /** Releases the open gate. A plan body (plan gate only) replaces the plan after validation. */
  async approve(body: unknown): Promise<OpenGate> {
    const { key, entry } = this.gates.openEntry();
    const gate = entry.gate;
    const isPlan = !!body && typeof body === 'object' && 'steps' in (body as object);
    const reject = !!body && typeof body === 'object' && (body as { decision?: unknown }).decision === 'reject';
    if (gate.kind === 'plan') {
      if (reject) {
        const reason = (body as { reason?: unknown }).reason;
        // the reason stays in the history whether or not an inbox records the gate
        await this.commit([{ type: 'audit', kind: 'plan_rejected', gateId: gate.id, ...(typeof reason === 'string' ? { reason } : {}) }], undefined, this.gates.settleRecord(gate.id, 'answered'));
        this.cancelSummary = planRejectedSummary(typeof reason === 'string' ? reason : undefined);
        this.deps.gates?.told({ removed: gate.id, outcome: 'answered' });
        await this.cancel();
      } else await this.approvePlan(key, gate, isPlan ? restoreSecrets(body as AgentPlan, this.plan, this.catalog) : this.plan, isPlan);
      return gate;
    }
    if (isPlan) throw new FengYuError('invalid_request', { reason: 'an edited plan can only be sent to a plan approval gate' });
    let outcome: GateOutcome = { kind: 'approved' };
    if (reject) outcome = { kind: 'rejected', reason: String((body as { reason?: unknown }).reason ?? 'rejected by the user') };
    await this.gates.answerStep(key, entry, outcome, 'answered');
    return gate;
  }

  private async approvePlan(key: string, gate: OpenGate, candidate: unknown, edited: boolean): Promise<void> {
    const plan = this.deps.validate(candidate, this);
    this.plan = plan;
    this.flow.plannedFor(plan);
    this.status = 'running';
    await this.commit([{ type: 'plan_approved', gateId: gate.id, edited, plan: redactPlan(plan, this.catalog) }], { status: 'running', plan: planRowText(plan, this.catalog), gate: null }, this.gates.settleRecord(gate.id, 'answered'));
    this.deps.crashPoint?.('gate-answer');
    this.deps.gates?.told({ removed: gate.id, outcome: 'answered' });
    this.gates.pending.delete(key);
    void reuseSteps(this, plan, this.init).then(
      (done) => this.dispatch({ type: 'plan_approved', key, steps: nodes(plan), done: doneSteps(plan, done, this.results) }),
      (err) => this.failWith(err),
    );
  }

  /**
   * The commit creating the run failed: nothing of the run was stored (its commits queued after
   * that one fail with it). It stops without writing anything; its caller reports the failure.
   */
  private abandon(): void {
    this.closed = true;
    this.state = { ...this.state, phase: 'ended' };
    this.stop.abort(new FengYuError('tool_cancelled', { name: 'run' }));
    this.gates.settleAll();
    this.resolveEnd('failed');
  }

  /** Host shutdown: stop writing, abort tool calls, let the caller record `interrupted`. */
  shutdown(): void {
    // a last step's end waiting for the run's end is written now (the run is then interrupted)
    if (this.heldEnd && !this.heldEnd.written) void this.heldEnd.write().catch(() => undefined);
    this.closed = true;
    this.state = { ...this.state, phase: 'ended' };
    this.stop.abort(new FengYuError('tool_cancelled', { name: 'run' }));
    this.gates.settleAll();
    this.resolveEnd('interrupted');
  }

  async cancel(): Promise<void> {
    if (this.state.cancelRequested || this.state.phase === 'ended') return;
    const written = this.commit([{ type: 'cancel_requested' }]);
    this.stop.abort(new FengYuError('tool_cancelled', { name: 'run' }));
    this.dispatch({ type: 'cancel' });
    await written;
  }

  /** `held`: the last step's end, written with the run's end in one commit. */
  private async finish(outcome: RunOutcome, held?: HeldEnd): Promise<void> {
    this.heldEnd = held;
    try {
      this.status = await finishRun(this, outcome, held);
      // stopped meanwhile (a shutdown, a failed creation): the end was not written
      if (this.closed) return;
    } catch (err) {
      // The end could not be written (a step's end reported before its commit failed, or the
      // end's own commit was refused): the run fails instead of staying `running`.
      if (this.closed) return;
      this.failure = this.writeFailed?.err ?? err;
      return this.recordFailure();
    }
    this.resolveEnd(this.status);
    if (this.status === 'completed' || this.status === 'failed') void runEndHooks(this, this.status);
  }

  /** Fails the run outside of a step: the failure's record (tried again while storage refuses it), then the end. */
  private async recordFailure(): Promise<void> {
    await recordFailure(this, this.failure, () => this.closed);
    this.status = 'failed';
    this.resolveEnd('failed');
  }
}
