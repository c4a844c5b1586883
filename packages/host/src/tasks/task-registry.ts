import { FengYuError, type PermissionMode, type TaskCapacity } from '@fengyu/protocol';
import type { Logger } from 'pino';
import type { CrashPoint } from '../config/crash-points';
import type { Clock } from '../clock';
import type { GateParking } from '../agent/gates';
import type { KeptSeal } from '../secrets/vault';
import { CancelSlot } from './canceller';
import type { QueuePolicy } from './fair-queue';
import type { TaskRecord, TaskStore } from './task.store';
import { taskFailure } from './task-failure';
import { type BodyHooks, type BodyOutcome, type ProcessKiller, type TaskBody, type TaskMetricsSink, applyOutcome, awaitEnds, copyRecord, doneSignal, FinishedTasks, listTasks, ownedTask, killRunningTask, newTaskRecord, checkTaskRequest, taskSnapshot, RUNNING_INTERRUPTED, TERMINAL, sleep, KILL_GRACES_MS } from './task-common';
import { reenterQueue } from './gate-handoff';
import { recoverTasks, refusedAfterRestart, sweepWaitingTasks } from './task-recovery';
import { WithinAdmission, type WithinOutcome } from './within-admission';
import { newTaskId } from './task-id';
import type {
  AdmittedWithin,
  CapacityRefusal,
  EndWriter,
  PreparedSubmission,
  SubmitResult,
  SubmitTaskRequest,
  SubmitWithin,
  TaskSnapshot,
  TaskState,
  TaskSubmitter,
} from './task-submitter';

/**
 * The executor around the fair queue: validates a submission (through the kind's body), asks the
 * policy for a decision, persists the task before answering, runs bodies in the slots the policy
 * hands out, records their end (output capped), releases the slot and starts what the policy
 * names next. Kills: a queued task is withdrawn before its body starts; a running one is
 * cancelled cooperatively, then the processes its run started get SIGTERM, then SIGKILL.
 */

export interface TaskRegistryDeps {
  store: TaskStore;
  policy: QueuePolicy;
  clock: Clock;
  logger: Logger;
  /** The body of each kind; every kind runs a published workflow. */
  body: TaskBody;
  metrics?: TaskMetricsSink;
  killProcesses?: ProcessKiller;
  /** Default mode when a request names none. */
  defaultPermissionMode?: PermissionMode;
  graces?: { cooperative: number; term: number; kill: number };
  /** Crash tests (docs/reliability.md): `task-admit`, `task-start`. */
  crashPoint?: CrashPoint;
}

interface Live {
  /** The task as the executor knows it now. */
  record: TaskRecord;
  /** The task as last committed: what is reported (a state change is reported only once it is durable). */
  view: TaskRecord;
  slot: CancelSlot;
  /** The task's first commit (its creation); its body never starts before it. */
  persisted: Promise<void>;
  done: Promise<void>;
  resolveDone: () => void;
  ended: boolean;
  /** While parked and re-queued: continues the body once the policy gives the task a slot again. */
  resume?: () => void;
  /** While parked: lets the body go on without a slot (a kill withdrew it; it only winds down). */
  wake?: () => void;
}

export class TaskRegistry implements TaskSubmitter, SubmitWithin {
  private readonly live = new Map<string, Live>();
  private readonly finishedTasks: FinishedTasks;
  private closing = false;

  constructor(private readonly deps: TaskRegistryDeps) {
    this.finishedTasks = new FinishedTasks((keep) => deps.store.prune(keep), deps.logger);
  }

  /** Tasks the last stop left queued (their body never started), submitted again by `resumeQueued`. */
  private leftQueued: TaskRecord[] = [];

  /** At start: running tasks become interrupted, queued ones are kept for `resumeQueued` (task-recovery.ts). */
  async recover(): Promise<number> {
    const { interrupted, leftQueued } = await recoverTasks(this.deps.store, this.now());
    this.leftQueued = leftQueued;
    return interrupted;
  }

  /**
   * Once the host is up (every domain listening for task ends, stale runs interrupted): the tasks
   * the last stop left queued go back into the queue in submission order, with their ids, as if
   * submitted again now; one the limits refuse comes back interrupted. Returns how many were queued again.
   */
  async resumeQueued(): Promise<number> {
    const left = this.leftQueued;
    this.leftQueued = [];
    let n = 0;
    for (const r of left) {
      if (this.closing) break;
      const now = this.now();
      const admission = this.deps.policy.submit({ id: r.id, owner: r.ownerId, priority: r.priority }, now);
      if (admission.kind === 'refuse') {
        await this.deps.store.save(refusedAfterRestart(r, now));
        continue;
      }
      const entry = this.liveEntry(r);
      n += 1;
      if (admission.kind === 'start') this.launch(entry, true);
    }
    return n;
  }

  private now(): number {
    return this.deps.clock.now();
  }

  /**
   * Saves the task as it is now; once committed it becomes what is reported. `soon: false` when
   * nothing waits on the write (it shares the next commit, at most `LAZY_COMMIT_MS` later);
   * `starts` when its body starts once it is committed (committed at once).
   */
  private persist(entry: Live, soon = true, starts = false): Promise<void> {
    const r = entry.record;
    const copy = copyRecord(r);
    return this.deps.store.save(r, starts ? { soon, starts } : { soon }).then(() => {
      entry.view = copy;
    });
  }

  /**
   * A task's creation; with the secret input values it keeps, both in one transaction (a store
   * without `saveWith` keeps no value: the run sees the marker).
   */
  private persistCreation(entry: Live, starts: boolean, seal: KeptSeal | undefined): Promise<void> {
    const store = this.deps.store;
    if (!seal || !store.saveWith) return this.persist(entry, true, starts);
    const copy = copyRecord(entry.record);
    return store.saveWith(entry.record, seal).then(() => {
      seal.committed();
      entry.view = copy;
    });
  }

  /**
   * What a live task reports: its committed record, and the start time as soon as the body has
   * started (a measured time, committed with the next group commit), not a state change.
   */
  private reported(entry: Live): TaskRecord {
    const v = entry.view;
    const started = entry.record.startedMs;
    return v.state === 'running' && v.startedMs === undefined && started !== undefined ? { ...v, startedMs: started } : v;
  }

  snapshot(r: TaskRecord, now = this.now()): TaskSnapshot {
    return taskSnapshot(r, now);
  }

  async submit(req: SubmitTaskRequest): Promise<SubmitResult> {
    const prepared = await this.prepareSubmit(req);
    const admitted = this.admit(prepared);
    if (!admitted.ok) return admitted;
    const { entry, starts } = admitted;
    // its body starts once this commit is done: committed at once, not at the turn's end
    entry.persisted = this.persistCreation(entry, starts, prepared.seal);
    try {
      await entry.persisted;
    } catch (err) {
      this.undo(entry);
      throw err;
    }
    this.deps.crashPoint?.('task-admit');
    // the body starts only once the task is durable, so a crash can never leave a run without its task
    if (starts) this.launch(entry, false);
    return { ok: true, task: this.snapshot(this.reported(entry)) };
  }

  canSubmitWithin(): boolean {
    return !this.closing && this.deps.store.saveWithin !== undefined;
  }

  onEndWithin(writer: EndWriter): () => void {
    return this.deps.store.onEndWithin?.(writer) ?? (() => undefined);
  }

  async prepareSubmit(req: SubmitTaskRequest): Promise<PreparedSubmission> {
    if (this.closing) throw new FengYuError('task_host_stopping');
    checkTaskRequest(req);
    const prepared = await this.deps.body.prepare(req);
    // the body chose the task's id when it kept a secret input under it
    const { workflowVersion, inputs, files, seal } = prepared;
    return { req: prepared.taskId && !req.taskId ? { ...req, taskId: prepared.taskId } : req, workflowVersion, inputs, ...(files?.length ? { files } : {}), ...(seal ? { seal } : {}) };
  }

  prepareChecked(req: SubmitTaskRequest, workflowVersion: number, seal?: KeptSeal): PreparedSubmission {
    if (this.closing) throw new FengYuError('task_host_stopping');
    checkTaskRequest(req);
    return { req, workflowVersion, inputs: req.inputs ?? {}, ...(seal ? { seal } : {}) };
  }

  admitWithin(prepared: PreparedSubmission): AdmittedWithin | { ok: false; refusal: CapacityRefusal } {
    const store = this.deps.store;
    if (!store.saveWithin || this.closing) throw new FengYuError('task_host_stopping');
    const admitted = this.admit(prepared);
    if (!admitted.ok) return admitted;
    const { entry, starts } = admitted;
    const admission = new WithinAdmission(entry, starts, this.withinOutcome, prepared.seal);
    try {
      store.saveWithin(entry.record);
      // its secret input values: in the same transaction, so a refused or rolled-back task leaves none
      prepared.seal?.writeWithin();
    } catch (err) {
      this.undo(entry);
      throw err;
    }
    return admission;
  }

  /** What a producer's commit or rollback does to a task admitted within it (made once, not per task). */
  private readonly withinOutcome: WithinOutcome<Live> = {
    committed: (entry, starts) => {
      this.deps.crashPoint?.('task-admit');
      if (starts && !this.closing) this.launch(entry, false);
    },
    rolledBack: (entry) => this.undo(entry),
  };

  /** Asks the policy; on admission, the live entry (not yet saved). */
  private admit(prepared: PreparedSubmission): { ok: true; entry: Live; starts: boolean } | { ok: false; refusal: CapacityRefusal } {
    const req = prepared.req;
    const now = this.now();
    const id = req.taskId ?? newTaskId(now);
    const admission = this.deps.policy.submit({ id, owner: req.ownerId, priority: req.priority }, now);
    if (admission.kind === 'refuse') {
      this.deps.metrics?.rejected(req.priority, admission.capacityScope);
      return {
        ok: false,
        refusal: { capacityScope: admission.capacityScope, ...(admission.capacityPriority ? { capacityPriority: admission.capacityPriority } : {}), retryable: true, retryAfterSeconds: 1 },
      };
    }
    const starts = admission.kind === 'start';
    const record = newTaskRecord(id, req, prepared, starts ? 'running' : 'queued', now, this.deps.defaultPermissionMode);
    return { ok: true, entry: this.liveEntry(record), starts };
  }

  /** A task's live entry, known to the executor from now on. */
  private liveEntry(record: TaskRecord): Live {
    // the view is a copy: the record's later changes (start, end) are reported once committed
    const entry: Live = { record, view: copyRecord(record), slot: new CancelSlot(), persisted: Promise.resolve(), ...doneSignal(), ended: false };
    this.live.set(record.id, entry);
    return entry;
  }

  /** A task whose creation was not committed: forgotten, its slot or queue place freed. */
  private undo(entry: Live): void {
    const id = entry.record.id;
    this.live.delete(id);
    entry.ended = true;
    if (!this.deps.policy.withdraw(id)) this.release(id);
    entry.resolveDone();
  }

  /**
   * Starts a body in the slot the policy gave it (its creation is already committed). A task
   * admitted straight into a slot was committed `running`: its body starts at once, the start time
   * written later. A task leaving the queue starts its body only once `running` is committed: a
   * task the store still holds `queued` has certainly not started, so a restart may submit it again
   * (`resumeQueued`), while a `running` one comes back interrupted and is never run again.
   */
  private launch(entry: Live, fromQueue: boolean): void {
    const r = entry.record;
    r.state = 'running';
    r.startedMs = this.now();
    this.deps.metrics?.dispatched(r.priority);
    this.deps.metrics?.queueWait(r.priority, 'executed', (r.startedMs - r.submittedMs) / 1000);
    // from the queue it is a state change (committed before the body); otherwise only the start time
    const started = this.persist(entry, fromQueue, fromQueue);
    started.catch((err) => this.deps.logger.warn({ err, taskId: r.id }, 'could not record the start of a task'));
    const body = (async () => {
      await (fromQueue ? started : entry.persisted);
      this.deps.crashPoint?.('task-start');
      return this.deps.body.run(r, {
        slot: entry.slot,
        onRun: async (runId) => {
          r.runId = runId;
          await this.persist(entry);
        },
        park: () => this.park(entry),
        unpark: () => this.unpark(entry),
      });
    })();
    body.then(
      (outcome) => this.end(entry, outcome),
      (err) => this.end(entry, { state: 'failed', text: '', error: taskFailure(err) }),
    );
  }

  /** Records a task's end (persisted first), then frees its slot and starts what is next. */
  private async end(entry: Live, outcome: BodyOutcome): Promise<void> {
    // A run comes back interrupted only when the host stops: start nothing more; `close` records it.
    if (outcome.state === 'interrupted') this.closing = true;
    if (entry.ended || this.closing) return;
    entry.ended = true;
    const r = entry.record;
    applyOutcome(r, outcome, entry.slot.requested, this.now());
    const saved = this.persist(entry, false);
    // The slot is free now: what starts next shares the end's commit instead of waiting for it.
    // The end is reported (listeners, waiters) only once committed.
    this.release(r.id);
    try {
      await saved;
    } catch (err) {
      this.deps.logger.error({ err, taskId: r.id }, 'could not record the end of a task');
      entry.view = r;
    }
    this.live.delete(r.id);
    await this.finished(entry);
  }

  private release(id: string): void {
    if (this.closing) return;
    for (const next of this.deps.policy.finish(id)) {
      const e = this.live.get(next.id);
      if (e?.resume) e.resume();
      else if (e) this.launch(e, true);
      else this.release(next.id);
    }
  }

  /** Its run waits at a gate: the task is `waiting` and its slot goes to the next task. */
  private park(entry: Live): void {
    if (entry.ended || this.closing) return;
    entry.record.state = 'waiting';
    this.persist(entry).catch((err) => this.deps.logger.warn({ err, taskId: entry.record.id }, 'could not record a waiting task'));
    this.release(entry.record.id);
  }

  /** The gate was answered: the task re-enters its queue; resolves once it holds a slot (gate-handoff.ts). */
  private unpark(entry: Live): Promise<void> {
    const warn = (err: unknown) => this.deps.logger.warn({ err, taskId: entry.record.id }, 'could not record a task re-entering its queue');
    return reenterQueue(entry, {
      closing: () => this.closing,
      submit: (r) => this.deps.policy.submit({ id: r.id, owner: r.ownerId, priority: r.priority }, this.now()),
      persist: () => void this.persist(entry).catch(warn),
    });
  }

  private async finished(entry: Live): Promise<void> {
    entry.resolveDone();
    const snap = this.snapshot(entry.view);
    this.finishedTasks.notify(snap);
    const pruning = this.finishedTasks.counted();
    if (pruning) await pruning;
  }

  onFinished(listener: (task: TaskSnapshot) => void): () => void {
    return this.finishedTasks.on(listener);
  }

  private async record(ownerId: string, id: string): Promise<TaskRecord | undefined> {
    const e = this.live.get(id);
    if (e) return e.record.ownerId === ownerId ? this.reported(e) : undefined;
    const r = await this.deps.store.get(id);
    return r && r.ownerId === ownerId ? r : undefined;
  }

  async get(ownerId: string, id: string): Promise<TaskSnapshot | undefined> {
    const r = await this.record(ownerId, id);
    return r ? this.snapshot(r) : undefined;
  }

  private owned(ownerId: string, id: string): Promise<TaskRecord> {
    return ownedTask((o, i) => this.record(o, i), ownerId, id);
  }

  list(ownerId: string, q: { state?: TaskState; limit?: number; cursor?: string } = {}): Promise<{ items: TaskSnapshot[]; nextCursor?: string }> {
    return listTasks(this.deps.store, ownerId, q, (r) => {
      const e = this.live.get(r.id);
      return e ? this.reported(e) : r;
    }, this.now());
  }

  /** Blocks up to `timeoutMs` for the task to finish, then returns its snapshot. */
  async output(ownerId: string, id: string, timeoutMs: number): Promise<TaskSnapshot> {
    await this.owned(ownerId, id);
    const e = this.live.get(id);
    if (e && timeoutMs > 0) await Promise.race([e.done, sleep(timeoutMs)]);
    return this.snapshot(await this.owned(ownerId, id));
  }

  /** Waits for any or all of 1..20 tasks, up to `timeoutMs`. */
  async wait(ownerId: string, ids: string[], mode: 'any' | 'all', timeoutMs: number): Promise<{ tasks: TaskSnapshot[]; timedOut: boolean }> {
    for (const id of ids) await this.owned(ownerId, id);
    const timedOut = await awaitEnds(ids.map((id) => this.live.get(id)?.done), mode, timeoutMs);
    const now = this.now();
    const tasks = await Promise.all(ids.map(async (id) => this.snapshot(await this.owned(ownerId, id), now)));
    return { tasks, timedOut };
  }

  /**
   * Kills a task. Queued: withdrawn before its body starts (its queue slot is free at once).
   * Running: cooperative cancel; after a grace the run's processes get SIGTERM, after another
   * SIGKILL; if the body still has not ended, the task is recorded cancelled and its slot freed.
   */
  async kill(ownerId: string, id: string): Promise<TaskSnapshot> {
    const seen = await this.owned(ownerId, id);
    // waiting after a restart (its run parked): the run is cancelled; the task, following it again, ends with it
    if (!this.live.has(id) && seen.state === 'waiting' && seen.runId && this.deps.body.cancel) {
      await this.deps.body.cancel(seen);
      const adopted = this.live.get(id);
      if (adopted) await adopted.done;
      return this.snapshot(await this.owned(ownerId, id));
    }
    const entry = this.live.get(id);
    if (!entry || TERMINAL.has(seen.state)) return this.snapshot(seen);
    if (entry.ended) {
      // its end is being committed
      await entry.done;
      return this.snapshot(this.reported(entry));
    }
    const r = entry.record;
    if (this.deps.policy.withdraw(id)) {
      entry.ended = true;
      entry.slot.kill();
      // a task re-queued after its gate: its run winds down (cancelled) without a slot
      entry.resume = undefined;
      entry.wake?.();
      r.state = 'cancelled';
      r.finishedMs = this.now();
      r.error = { code: 'task_cancelled', message: 'The task was killed before it started.' };
      this.deps.metrics?.queueWait(r.priority, 'cancelled', (r.finishedMs - r.submittedMs) / 1000);
      await entry.persisted;
      await this.persist(entry);
      this.live.delete(id);
      await this.finished(entry);
      return this.snapshot(entry.view);
    }
    const g = this.deps.graces ?? KILL_GRACES_MS;
    let over = false;
    void entry.done.then(() => {
      over = true;
    });
    await killRunningTask({
      slot: entry.slot,
      done: entry.done,
      settled: () => over || this.closing,
      runId: () => r.runId,
      killer: this.deps.killProcesses,
      graces: g,
      endCancelled: () => this.end(entry, { state: 'cancelled', text: '' }),
    });
    return this.snapshot(this.reported(entry));
  }

  capacity(ownerId: string): TaskCapacity {
    return this.deps.policy.capacity(this.now(), ownerId);
  }

  globalCapacity(): TaskCapacity {
    return this.deps.policy.capacity(this.now());
  }

  /** At start, after the runs were recovered: a waiting task goes on waiting while its run is parked (task-recovery.ts). */
  sweepWaiting(parked: (runId: string) => Promise<boolean>): Promise<number> {
    return sweepWaitingTasks(this.deps.store, () => this.now(), parked);
  }

  /**
   * A parked run whose gate was answered after a host stop: its waiting task is live again, and
   * the run goes on once the task holds a slot (the parking returned). Undefined: no such task.
   */
  async adoptParked(runId: string): Promise<GateParking | undefined> {
    const record = ((await this.deps.store.waiting?.()) ?? []).find((r) => r.runId === runId);
    const follow = this.deps.body.follow?.bind(this.deps.body);
    if (!record || !follow || this.live.has(record.id) || this.closing) return undefined;
    const entry = this.liveEntry(record);
    const hooks: BodyHooks = { slot: entry.slot, onRun: async () => undefined, park: () => this.park(entry), unpark: () => this.unpark(entry) };
    follow(record, hooks).then(
      (outcome) => this.end(entry, outcome),
      (err) => this.end(entry, { state: 'failed', text: '', error: taskFailure(err) }),
    );
    return { parked: hooks.park, resumed: hooks.unpark };
  }

  /**
   * Host stop: nothing more starts; running tasks are recorded interrupted (never re-run), queued
   * ones stay queued for the next start (`resumeQueued`), or are interrupted too when the store
   * cannot list them.
   */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    const live = [...this.live.values()];
    for (const e of live) e.slot.kill();
    await Promise.allSettled(live.map((e) => e.persisted));
    await this.deps.store.interruptLive(this.now(), RUNNING_INTERRUPTED, this.deps.store.queued ? ['running'] : ['queued', 'running']);
    for (const e of live) e.resolveDone();
    this.live.clear();
  }
}
