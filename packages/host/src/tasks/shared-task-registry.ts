import { FengYuError, type PermissionMode, type TaskCapacity } from '@fengyu/protocol';
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import type { Db } from '../storage/database';
import type { GateParking } from '../agent/gates';
import type { ReleaseCommit } from '../agent/let-go';
import { CancelSlot } from './canceller';
import { type FairQueue, type QueueLimits, resolveLimits } from './fair-queue';
import { SharedAdmissions } from './shared-admission';
import { parkTask } from './shared-park';
import { SharedEnds } from './shared-ends';
import { INTERRUPTED, sweepTasks } from './shared-sweep';
import { replayQueue, SharedDispatcher } from './shared-dispatch';
import { SharedTaskStore } from './shared-task.store';
import { fromRow, SqliteTaskStore, type TaskRecord } from './task.store';
import type { TaskEngine } from './task-engine';
import { taskFailure } from './task-failure';
import { newTaskId } from './task-id';
import { type BodyOutcome, type BodyHooks, applyOutcome, checkTaskRequest, doneSignal, FINISHED_KEPT, FinishedTasks, killRunningTask, listTasks, newTaskRecord, ownedTask, KILL_GRACES_MS, type ProcessKiller, type TaskBody, type TaskMetricsSink, taskSnapshot } from './task-common';
import { sleep, TERMINAL } from './task-common';
import type { SubmitResult, SubmitTaskRequest, TaskSnapshot, TaskState, TaskSubmitter } from './task-submitter';

/**
 * The task executor of a shared deployment: several host processes, one PostgreSQL database,
 * one queue. The rules are the single host's (the same `FairQueue`), applied twice:
 *
 * - admission, on the host that receives the submission: under a database-wide lock, the live
 *   rows are replayed into a `FairQueue` (running and handed-off tasks hold running slots, queued
 *   ones wait in submission order) and the new tasks (those waiting on this host, in order) are
 *   admitted or refused by its limits and reservations; the rows are written in the same
 *   transaction;
 * - dispatch, on one elected host (a session advisory lock; another host takes over when its
 *   connection goes): a long-lived `FairQueue` mirrors the live rows and, whenever running slots
 *   are free, picks the next tasks by owner round robin and the 4:2:1 class cycle and hands them
 *   to the job engine (pg-boss), at most `maxRunning` at a time across all hosts.
 *
 * Every host is a worker: it takes handed-off jobs, in one transaction with marking the task
 * running on itself, runs the body and records the end with completing the job. A task is run
 * at most once: a job is taken once (retries off), and a host that dies leaves its running tasks
 * to the sweep of dead hosts, which records them `interrupted` and fails their jobs — except a
 * task whose run was never written (its body had not begun): it is put back, its job sent again.
 * Parts: shared-admission.ts (admission), shared-dispatch.ts (the dispatcher), shared-ends.ts
 * (ends), shared-sweep.ts (the sweep).
 */



export interface SharedTaskDeps {
  db: Db;
  /** The database URL: the dispatcher election holds a lock on a connection of its own. */
  url: string;
  hostId: string;
  engine: TaskEngine;
  clock: Clock;
  logger: Logger;
  body: TaskBody;
  limits?: Partial<QueueLimits>;
  metrics?: TaskMetricsSink;
  killProcesses?: ProcessKiller;
  defaultPermissionMode?: PermissionMode;
  graces?: { cooperative: number; term: number; kill: number };
  /** How often a host looks for work, hand-offs to make, kill requests and ends (ms). */
  pollMs?: number;
  /** How many task bodies this host runs at once (default: the global `maxRunning`). */
  workerSlots?: number;
  /** Lets go of a live run that only waits at its gate, with the task's change in one transaction (`AgentService.letGo`). */
  letGo?: (runId: string, commit: ReleaseCommit) => Promise<boolean>;
}

interface LocalTask {
  record: TaskRecord;
  slot: CancelSlot;
  done: Promise<void>;
  resolveDone: () => void;
  ended: boolean;
  killing?: Promise<void>;
}

export class SharedTaskRegistry implements TaskSubmitter {
  readonly limits: QueueLimits;
  private readonly store: SharedTaskStore;
  private readonly reads: SqliteTaskStore;
  private readonly local = new Map<string, LocalTask>();
  /** Tasks submitted through this host and not yet seen ending: their end is announced here. */
  private readonly submittedHere = new Set<string>();
  private readonly finishedTasks: FinishedTasks;
  private view: FairQueue;
  private readonly dispatcher: SharedDispatcher;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private again = false;
  private ticks = 0;
  private closing = false;
  private readonly admissions: SharedAdmissions;
  private readonly ends: SharedEnds;

  constructor(private readonly deps: SharedTaskDeps) {
    this.limits = resolveLimits(deps.limits);
    this.store = new SharedTaskStore(deps.db);
    this.reads = new SqliteTaskStore(deps.db);
    this.finishedTasks = new FinishedTasks((keep) => this.reads.prune(keep), deps.logger);
    this.view = replayQueue([], this.limits);
    this.admissions = new SharedAdmissions(this.store, this.limits);
    this.ends = new SharedEnds(this.store, deps.engine, deps.hostId, deps.logger);
    this.dispatcher = new SharedDispatcher({ url: deps.url, hostId: deps.hostId, store: this.store, engine: deps.engine, clock: deps.clock, logger: deps.logger, limits: this.limits });
  }

  private get pollMs(): number {
    return this.deps.pollMs ?? 100;
  }

  private now(): number {
    return this.deps.clock.now();
  }

  /** Starts looking for work (and, when elected, dispatching). */
  start(): void {
    this.timer = setInterval(() => this.kick(), this.pollMs);
    this.timer.unref?.();
    this.kick();
  }

  /** Runs one round now (or right after the current one). */
  private kick(): void {
    if (this.closing) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = this.round()
      .catch((err) => this.deps.logger.warn({ err }, 'shared task round failed'))
      .finally(() => {
        this.ticking = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  private async round(): Promise<void> {
    this.ticks += 1;
    const d = this.dispatcher;
    if (!d.leader && this.ticks % 10 === 1) await d.tryLead();
    if (d.leader || this.ticks % 5 === 1) {
      const rows = await this.store.liveRows();
      this.view = replayQueue(rows, this.limits);
      if (d.leader) await d.dispatch(rows);
    }
    await this.work();
    await this.watch();
  }

  // ── admission ────────────────────────────────────────────────────────────────────────────

  async submit(req: SubmitTaskRequest): Promise<SubmitResult> {
    if (this.closing) throw new FengYuError('task_host_stopping');
    checkTaskRequest(req);
    const prepared = await this.deps.body.prepare(req);
    const now = this.now();
    // the body chose the task's id when it kept a secret input under it
    const id = req.taskId ?? prepared.taskId ?? newTaskId(now);
    const record = newTaskRecord(id, req, prepared, 'queued', now, this.deps.defaultPermissionMode);
    const admission = await this.admissions.admit(record, prepared.seal);
    const refused = admission.kind === 'refuse' ? admission : undefined;
    if (refused) {
      this.deps.metrics?.rejected(req.priority, refused.capacityScope);
      return { ok: false, refusal: { capacityScope: refused.capacityScope, ...(refused.capacityPriority ? { capacityPriority: refused.capacityPriority } : {}), retryable: true, retryAfterSeconds: 1 } };
    }
    this.submittedHere.add(id);
    this.kick();
    return { ok: true, task: taskSnapshot(record, now) };
  }

  // ── work (every host) ────────────────────────────────────────────────────────────────────

  /** Takes released jobs while this host has room, marking each task running here in the same commit. */
  private async work(): Promise<void> {
    const free = (this.deps.workerSlots ?? this.limits.maxRunning) - this.local.size;
    if (free <= 0 || this.closing) return;
    const engine = this.deps.engine;
    const claimed = await this.store.transaction(async (trx) => {
      const jobs = await engine.take(trx as unknown as Db, free);
      if (jobs.length === 0) return [];
      const rows = await this.store.claimRunning(
        trx,
        jobs.map((j) => j.taskId),
        this.now(),
        this.deps.hostId,
      );
      const taken = new Set(rows.map((r) => r.id));
      // a task killed after its hand-off has nothing left to run
      await engine.complete(
        trx as unknown as Db,
        jobs.filter((j) => !taken.has(j.taskId)).map((j) => j.id),
      );
      return rows;
    });
    for (const r of claimed) this.launch(fromRow(r));
  }

  private launch(record: TaskRecord): void {
    const entry: LocalTask = { record, slot: new CancelSlot(), ...doneSignal(), ended: false };
    this.local.set(record.id, entry);
    this.deps.metrics?.dispatched(record.priority);
    this.deps.metrics?.queueWait(record.priority, 'executed', ((record.startedMs ?? record.submittedMs) - record.submittedMs) / 1000);
    const hooks = this.hooksOf(entry);
    Promise.resolve()
      .then(() => this.deps.body.run(record, hooks))
      .then(
        (outcome) => this.end(entry, outcome),
        (err) => this.end(entry, { state: 'failed', text: '', error: taskFailure(err) }),
      );
  }

  /**
   * What a body of this host calls. A run that reaches a gate with nothing else to do is let go of
   * and its task gives its job and slot back (`park`). The answer's host takes the task again with
   * the run (`adoptParked`), running at once, so `unpark` has nothing left to do; a run that was
   * not let go of (a step still running) keeps its task's slot until it goes on.
   */
  private hooksOf(entry: LocalTask): BodyHooks {
    const record = entry.record;
    return {
      slot: entry.slot,
      onRun: async (runId) => {
        record.runId = runId;
        await this.store.setRunId(record.id, runId, this.deps.hostId);
      },
      park: (runId) => void this.park(entry, runId).catch((err) => this.deps.logger.warn({ err, taskId: record.id }, 'could not record a waiting task')),
      unpark: async () => undefined,
    };
  }

  /** The run waits at its gate (`parkTask`): once that commits, the task leaves this host (its slot free) and reads `waiting`. */
  private async park(entry: LocalTask, runId: string): Promise<void> {
    const letGo = this.deps.letGo;
    if (!letGo || this.closing || entry.ended || entry.slot.requested) return;
    const id = entry.record.id;
    if (!(await parkTask({ store: this.store, engine: this.deps.engine, hostId: this.deps.hostId, letGo }, id, runId))) return;
    // its body here ends with its run let go of, recording nothing
    entry.ended = true;
    Object.assign(entry.record, { state: 'waiting', runId });
    if (this.local.get(id) === entry) this.local.delete(id);
    entry.resolveDone();
    this.kick();
  }

  /** Records a task's end with its job's completion (only while it is still running here). */
  private async end(entry: LocalTask, outcome: BodyOutcome): Promise<void> {
    if (entry.ended) return;
    entry.ended = true;
    const r = entry.record;
    // A run comes back interrupted only when this host stops: its task is left to the stop's sweep
    // (`sweepHosts`), which keeps it waiting when its run is parked at a gate, else interrupts it.
    // So is a body that ends with no run recorded while this host stops, not killed by its owner
    // (the stop came before it wrote its run): the sweep puts it back when no run was written.
    const leftToSweep = outcome.state === 'interrupted' ? this.closing || !entry.slot.requested : this.closing && !entry.killing && !r.runId;
    if (leftToSweep) {
      if (this.local.get(r.id) === entry) this.local.delete(r.id);
      entry.resolveDone();
      return;
    }
    applyOutcome(r, outcome, entry.slot.requested, this.now(), INTERRUPTED);
    const recorded = await this.ends.record(r);
    // not recorded: this host was swept as dead meanwhile, and the task already reads interrupted
    if (!recorded && !this.closing) this.deps.logger.warn({ taskId: r.id }, 'a task ended after it was recorded interrupted; its end is dropped');
    if (this.local.get(r.id) === entry) this.local.delete(r.id);
    entry.resolveDone();
    if (recorded) await this.announce(taskSnapshot(r, this.now()));
    this.kick();
  }

  /** Tells this host's listeners that a task submitted here ended (once per task). */
  private async announce(snap: TaskSnapshot): Promise<void> {
    if (this.submittedHere.delete(snap.id)) {
      this.finishedTasks.notify(snap);
    }
    const pruning = this.finishedTasks.counted();
    if (pruning) await pruning;
  }

  /** Ends of tasks submitted here and run elsewhere; kill requests for tasks running here. */
  private async watch(): Promise<void> {
    const remote = [...this.submittedHere].filter((id) => !this.local.has(id));
    if (remote.length) {
      const ended = await this.store.ended(remote);
      const now = this.now();
      for (const row of ended) if (!this.local.has(row.id)) await this.announce(taskSnapshot(fromRow(row), now));
    }
    if (this.local.size) {
      const asked = await this.store.killRequested([...this.local.keys()]);
      for (const id of asked) {
        const e = this.local.get(id);
        if (e) void this.killLocal(e);
      }
    }
  }

  // ── reads ────────────────────────────────────────────────────────────────────────────────

  private async record(ownerId: string, id: string): Promise<TaskRecord | undefined> {
    const e = this.local.get(id);
    if (e) return e.record.ownerId === ownerId ? e.record : undefined;
    const r = await this.reads.get(id);
    return r && r.ownerId === ownerId ? r : undefined;
  }

  private owned(ownerId: string, id: string): Promise<TaskRecord> {
    return ownedTask((o, i) => this.record(o, i), ownerId, id);
  }

  snapshot(r: TaskRecord, now = this.now()): TaskSnapshot {
    return taskSnapshot(r, now);
  }

  async get(ownerId: string, id: string): Promise<TaskSnapshot | undefined> {
    const r = await this.record(ownerId, id);
    return r ? taskSnapshot(r, this.now()) : undefined;
  }

  list(ownerId: string, q: { state?: TaskState; limit?: number; cursor?: string } = {}): Promise<{ items: TaskSnapshot[]; nextCursor?: string }> {
    return listTasks(this.reads, ownerId, q, (r) => this.local.get(r.id)?.record ?? r, this.now());
  }

  /** Polls the tasks until any/all ended or the time is up; true when they did. */
  private async settle(ids: string[], mode: 'any' | 'all', timeoutMs: number): Promise<boolean> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const rows = await this.store.states(ids);
      const ended = rows.filter((r) => TERMINAL.has(r.state as TaskState)).length + (ids.length - rows.length);
      if (mode === 'all' ? ended === ids.length : ended > 0) return true;
      const left = end - Date.now();
      if (left <= 0) return false;
      const mine = ids.map((id) => this.local.get(id)?.done).filter((p): p is Promise<void> => p !== undefined);
      await Promise.race([sleep(Math.min(this.pollMs, left)), ...(mode === 'any' ? mine : [])]);
    }
  }

  async output(ownerId: string, id: string, timeoutMs: number): Promise<TaskSnapshot> {
    const r = await this.owned(ownerId, id);
    if (!TERMINAL.has(r.state) && timeoutMs > 0) await this.settle([id], 'all', timeoutMs);
    return taskSnapshot(await this.owned(ownerId, id), this.now());
  }

  async wait(ownerId: string, ids: string[], mode: 'any' | 'all', timeoutMs: number): Promise<{ tasks: TaskSnapshot[]; timedOut: boolean }> {
    for (const id of ids) await this.owned(ownerId, id);
    const timedOut = !(await this.settle(ids, mode, timeoutMs));
    const now = this.now();
    const tasks = await Promise.all(ids.map(async (id) => taskSnapshot(await this.owned(ownerId, id), now)));
    return { tasks, timedOut };
  }

  // ── kill ─────────────────────────────────────────────────────────────────────────────────

  /**
   * Queued: withdrawn before its body starts (its job, if handed off, is cancelled). Running
   * here: cooperative cancel, then SIGTERM, then SIGKILL of the run's processes. Running on
   * another host: a kill request that host acts on at its next round.
   */
  async kill(ownerId: string, id: string): Promise<TaskSnapshot> {
    const r = await this.owned(ownerId, id);
    if (TERMINAL.has(r.state)) return taskSnapshot(r, this.now());
    if (r.state === 'queued') {
      const now = this.now();
      const withdrawn = await this.store.transaction(async (trx) => {
        const u = await this.store.withdrawQueued(trx, id, now, { code: 'task_cancelled', message: 'The task was killed before it started.' });
        if (u && u.released_ms !== null) await this.deps.engine.cancel(trx as unknown as Db, [id]);
        return u;
      });
      if (withdrawn) {
        this.deps.metrics?.queueWait(r.priority, 'cancelled', (now - r.submittedMs) / 1000);
        const snap = taskSnapshot(fromRow(withdrawn), now);
        await this.announce(snap);
        this.kick();
        return snap;
      }
    }
    const entry = this.local.get(id);
    if (entry) {
      await this.killLocal(entry);
      // its run let go of at its gate meanwhile and taken back here (the kill's cancel, or an answer): that task is killed too
      const again = this.local.get(id);
      if (again && again !== entry) await this.killLocal(again);
    } else if (r.state === 'waiting' && r.runId && this.deps.body.cancel) {
      // its run parked by its host's stop: the run is cancelled here, and the task, taken by this host to follow it, ends with it
      await this.deps.body.cancel(r);
      await this.local.get(id)?.done;
    } else {
      await this.store.requestKill(id);
      const g = this.deps.graces ?? KILL_GRACES_MS;
      await this.settle([id], 'all', g.cooperative + g.term + g.kill + 4 * this.pollMs);
    }
    return taskSnapshot(await this.owned(ownerId, id), this.now());
  }

  private killLocal(entry: LocalTask): Promise<void> {
    entry.killing ??= killRunningTask({
      slot: entry.slot,
      done: entry.done,
      settled: () => entry.ended,
      runId: () => entry.record.runId,
      killer: this.deps.killProcesses,
      graces: this.deps.graces ?? KILL_GRACES_MS,
      endCancelled: () => this.end(entry, { state: 'cancelled', text: '' }),
    });
    return entry.killing;
  }

  // ── capacity, listeners, lifecycle ─────────────────────────────────────────────────────────

  /** Queue pressure across all hosts, as of the last round (at most a few polls old). */
  capacity(ownerId: string): TaskCapacity {
    return this.viewOf(ownerId);
  }

  globalCapacity(): TaskCapacity {
    return this.viewOf();
  }

  private viewOf(ownerId?: string): TaskCapacity {
    const v = this.view.capacity(this.now(), ownerId);
    return { ...v, maxRunning: this.limits.maxRunning, ownerMaxRunning: this.limits.ownerMaxRunning, saturated: v.running >= this.limits.maxRunning };
  }

  onFinished(listener: (task: TaskSnapshot) => void): () => void {
    return this.finishedTasks.on(listener);
  }

  /** Sweeps the named hosts' tasks (`sweepTasks`: interrupted, kept waiting, or put back when their body had not begun); `except`: never put back. */
  async sweepHosts(hostIds: string[], unowned = false, except: string[] = []): Promise<number> {
    if (hostIds.length === 0 && !unowned) return 0;
    const n = await sweepTasks(this.store, this.deps.engine, this.now(), hostIds, unowned, except);
    if (n > 0) this.kick();
    return n;
  }

  /**
   * A parked run whose gate this host's answer claimed (its task left waiting by its stopped host):
   * the task is taken onto this host, running (once: only while it waits), and follows the run to
   * its end here. Undefined: no waiting task (another host took it, or the run has none).
   */
  async adoptParked(runId: string): Promise<GateParking | undefined> {
    const follow = this.deps.body.follow?.bind(this.deps.body);
    if (this.closing || !follow) return undefined;
    const row = await this.store.claimWaiting(runId, this.deps.hostId);
    if (!row) return undefined;
    const record = fromRow(row);
    const entry: LocalTask = { record, slot: new CancelSlot(), ...doneSignal(), ended: false };
    this.local.set(record.id, entry);
    this.kick();
    const hooks = this.hooksOf(entry);
    follow(record, hooks).then(
      (outcome) => this.end(entry, outcome),
      (err) => this.end(entry, { state: 'failed', text: '', error: taskFailure(err) }),
    );
    return { parked: hooks.park, resumed: hooks.unpark };
  }

  /** At start: nothing of this host can be live yet (dead hosts are swept by the host lease); prunes. */
  async recover(): Promise<number> {
    await this.reads.prune(FINISHED_KEPT);
    return 0;
  }

  /**
   * Host stop: nothing more is taken; this host's running tasks are recorded interrupted (never
   * re-run), except those whose body had not written its run: they go back to the shared queue.
   * A body still without a run may be writing it: the stop waits for it a bounded time (the kill's
   * cooperative grace), and one that has not ended by then is interrupted, never put back.
   */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.timer) clearInterval(this.timer);
    await this.ticking;
    const live = [...this.local.values()];
    for (const e of live) e.slot.kill();
    const unbegun = live.filter((e) => !e.ended && !e.record.runId);
    if (unbegun.length) await Promise.race([Promise.all(unbegun.map((e) => e.done)), sleep((this.deps.graces ?? KILL_GRACES_MS).cooperative)]);
    const writing = unbegun.filter((e) => !e.ended).map((e) => e.record.id);
    await this.sweepHosts([this.deps.hostId], false, writing).catch((err) => this.deps.logger.warn({ err }, 'could not record this host’s tasks interrupted'));
    for (const e of live) e.resolveDone();
    this.local.clear();
    this.dispatcher.stop();
    await this.deps.engine.stop().catch((err) => this.deps.logger.warn({ err }, 'job engine stop failed'));
  }
}
