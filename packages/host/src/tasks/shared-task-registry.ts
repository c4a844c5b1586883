import { FengYuError, type PermissionMode, type TaskCapacity } from '@fengyu/protocol';
import type pg from 'pg';
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import { type Db, loadPg } from '../storage/database';
import { CancelSlot } from './canceller';
import { type Admission, FairQueue, type QueueLimits, type QueueTask, resolveLimits } from './fair-queue';
import { type LiveRow, SharedTaskStore } from './shared-task.store';
import { fromRow, SqliteTaskStore, type TaskRecord } from './task.store';
import type { TaskEngine } from './task-engine';
import { taskFailure } from './task-failure';
import { newTaskId } from './task-id';
import { type BodyOutcome, type BodyHooks, capText, checkTaskRequest, FINISHED_KEPT, FinishedTasks, killRunningTask, newTaskRecord, ownedTask, taskCursor, KILL_GRACES_MS, type ProcessKiller, type TaskBody, type TaskMetricsSink, taskSnapshot } from './task-common';
import { sleep, TERMINAL } from './task-common';
import type { SubmitResult, SubmitTaskRequest, TaskPriority, TaskSnapshot, TaskState, TaskSubmitter } from './task-submitter';

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
 * to the sweep of dead hosts, which records them `interrupted` and fails their jobs.
 */

const ADMISSION_LOCK = 7_001_002;
const DISPATCH_LOCK = 7_001_003;
const INTERRUPTED = { code: 'task_interrupted', message: 'The host running this task stopped; it is not run again.' };


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
}

interface LocalTask {
  record: TaskRecord;
  slot: CancelSlot;
  done: Promise<void>;
  resolveDone: () => void;
  ended: boolean;
  killing?: Promise<void>;
}

function queueTask(r: LiveRow): QueueTask {
  return { id: r.id, owner: r.owner, priority: r.priority as TaskPriority };
}

const isHeld = (r: LiveRow) => r.state === 'running' || r.released_ms !== null;

/** The policy state the live rows stand for: held tasks run, the others wait in submission order. */
export function replayQueue(rows: LiveRow[], limits: QueueLimits): FairQueue {
  // no running slot is ever free in a replay: a submission is queued or refused, never started
  const q = new FairQueue({ ...limits, maxRunning: 0 });
  for (const r of rows) if (isHeld(r)) q.adopt(queueTask(r));
  for (const r of rows) if (!isHeld(r)) q.submit(queueTask(r), r.submitted_ms);
  return q;
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
  private mirror: { queue: FairQueue; known: Map<string, 'queued' | 'running'> } | undefined;
  private leader = false;
  private lockClient: pg.Client | undefined;
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private again = false;
  private ticks = 0;
  private closing = false;
  private admissions: Array<{ record: TaskRecord; resolve: (a: Admission) => void; reject: (err: unknown) => void }> = [];
  private admitting = false;
  private ending: Array<{ entry: LocalTask; resolve: (recorded: boolean) => void }> = [];
  private flushingEnds = false;

  constructor(private readonly deps: SharedTaskDeps) {
    this.limits = resolveLimits(deps.limits);
    this.store = new SharedTaskStore(deps.db);
    this.reads = new SqliteTaskStore(deps.db);
    this.finishedTasks = new FinishedTasks((keep) => this.reads.prune(keep), deps.logger);
    this.view = replayQueue([], this.limits);
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
    if (!this.leader && this.ticks % 10 === 1) await this.tryLead();
    if (this.leader) await this.dispatch();
    else if (this.ticks % 5 === 1) this.view = replayQueue(await this.store.liveRows(), this.limits);
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
    const admission = await this.admit(record);
    const refused = admission.kind === 'refuse' ? admission : undefined;
    if (refused) {
      this.deps.metrics?.rejected(req.priority, refused.capacityScope);
      return { ok: false, refusal: { capacityScope: refused.capacityScope, ...(refused.capacityPriority ? { capacityPriority: refused.capacityPriority } : {}), retryable: true, retryAfterSeconds: 1 } };
    }
    this.submittedHere.add(id);
    this.kick();
    return { ok: true, task: taskSnapshot(record, now) };
  }

  /**
   * Admits submissions in batches: the submissions waiting on this host go through one
   * transaction under the database-wide lock, one replay of the live rows, and one insert of the
   * admitted rows (each decided after the ones before it). One connection per host waits for the
   * lock, so admissions never starve dispatch and work of connections.
   */
  private admit(record: TaskRecord): Promise<Admission> {
    return new Promise((resolve, reject) => {
      this.admissions.push({ record, resolve, reject });
      if (!this.admitting) void this.admitBatches();
    });
  }

  private async admitBatches(): Promise<void> {
    this.admitting = true;
    while (this.admissions.length) {
      const batch = this.admissions.splice(0);
      try {
        const decisions = await this.store.transaction(async (trx) => {
          await this.store.lockAdmission(trx, ADMISSION_LOCK);
          const replica = replayQueue(await this.store.liveRows(trx), this.limits);
          const out = batch.map((b) => replica.submit({ id: b.record.id, owner: b.record.ownerId, priority: b.record.priority }, b.record.submittedMs));
          await this.store.insert(
            trx,
            batch.filter((_, i) => out[i]?.kind !== 'refuse').map((b) => b.record),
          );
          return out;
        });
        batch.forEach((b, i) => b.resolve(decisions[i] as Admission));
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    this.admitting = false;
  }

  // ── dispatch (elected host) ──────────────────────────────────────────────────────────────

  private async tryLead(): Promise<void> {
    try {
      if (!this.lockClient) {
        const client = new (loadPg().Client)({ connectionString: this.deps.url, application_name: 'fengyu-dispatcher' });
        client.on('error', () => this.resign(client));
        await client.connect();
        this.lockClient = client;
      }
      const r = await this.lockClient.query<{ ok: boolean }>('select pg_try_advisory_lock($1) as ok', [DISPATCH_LOCK]);
      if (r.rows[0]?.ok) {
        this.leader = true;
        this.mirror = undefined;
        this.deps.logger.info({ hostId: this.deps.hostId }, 'this host dispatches the shared task queue');
      }
    } catch (err) {
      this.deps.logger.warn({ err }, 'dispatcher election failed');
      if (this.lockClient) this.resign(this.lockClient);
    }
  }

  /** The lock's connection is gone: so is the lock; another host (or this one, later) takes over. */
  private resign(client: pg.Client): void {
    if (this.lockClient === client) this.lockClient = undefined;
    this.leader = false;
    this.mirror = undefined;
    void client.end().catch(() => undefined);
  }

  /** Mirrors the live rows into the dispatcher's queue and hands the tasks it starts to the engine. */
  private async dispatch(): Promise<void> {
    const rows = await this.store.liveRows();
    this.view = replayQueue(rows, this.limits);
    // after a take-over the turn order starts afresh from the rows
    this.mirror ??= {
      queue: new FairQueue({ maxRunning: this.limits.maxRunning, ownerMaxRunning: this.limits.ownerMaxRunning, maxQueued: Number.POSITIVE_INFINITY, ownerQueueLimit: Number.POSITIVE_INFINITY, batchOwner: Number.POSITIVE_INFINITY, batchGlobal: Number.POSITIVE_INFINITY, nonInteractiveOwner: Number.POSITIVE_INFINITY, nonInteractiveGlobal: Number.POSITIVE_INFINITY }),
      known: new Map(),
    };
    const { queue, known } = this.mirror;
    const live = new Set(rows.map((r) => r.id));
    const start: QueueTask[] = [];
    for (const [id, state] of known) {
      if (live.has(id)) continue;
      known.delete(id);
      if (state === 'running') start.push(...queue.finish(id));
      else queue.withdraw(id);
    }
    for (const r of rows) {
      if (known.has(r.id)) continue;
      const task = queueTask(r);
      if (isHeld(r)) {
        queue.adopt(task);
        known.set(r.id, 'running');
      } else if (queue.submit(task, r.submitted_ms).kind === 'start') start.push(task);
      else known.set(r.id, 'queued');
    }
    for (const t of start) known.set(t.id, 'running');
    if (start.length) await this.release(start.map((t) => t.id));
  }

  /** Hands queued tasks to the engine (each once: only a queued, not yet released row is). */
  private async release(ids: string[]): Promise<void> {
    const engine = this.deps.engine;
    await this.store.transaction(async (trx) => {
      const released = await this.store.markReleased(trx, ids, this.now());
      await engine.send(trx as unknown as Db, released);
    });
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
    let resolveDone!: () => void;
    const done = new Promise<void>((r) => {
      resolveDone = r;
    });
    const entry: LocalTask = { record, slot: new CancelSlot(), done, resolveDone, ended: false };
    this.local.set(record.id, entry);
    this.deps.metrics?.dispatched(record.priority);
    this.deps.metrics?.queueWait(record.priority, 'executed', ((record.startedMs ?? record.submittedMs) - record.submittedMs) / 1000);
    const hooks: BodyHooks = {
      slot: entry.slot,
      onRun: async (runId) => {
        record.runId = runId;
        await this.store.setRunId(record.id, runId, this.deps.hostId);
      },
      // on a shared database a task keeps its job (and slot) while its run waits in the inbox
      park: () => undefined,
      unpark: async () => undefined,
    };
    Promise.resolve()
      .then(() => this.deps.body.run(record, hooks))
      .then(
        (outcome) => this.end(entry, outcome),
        (err) => this.end(entry, { state: 'failed', text: '', error: taskFailure(err) }),
      );
  }

  /** Records a task's end with its job's completion (only while it is still running here). */
  private async end(entry: LocalTask, outcome: BodyOutcome): Promise<void> {
    if (entry.ended) return;
    entry.ended = true;
    const r = entry.record;
    r.state = entry.slot.requested && outcome.state !== 'completed' ? 'cancelled' : outcome.state;
    r.finishedMs = this.now();
    r.output = capText(outcome.text);
    if (r.state === 'cancelled') r.error = { code: 'task_cancelled', message: 'The task was killed.' };
    else if (r.state === 'interrupted') r.error = outcome.error ?? INTERRUPTED;
    else if (outcome.error) r.error = outcome.error;
    const recorded = await this.recordEnd(entry);
    // not recorded: this host was swept as dead meanwhile, and the task already reads interrupted
    if (!recorded && !this.closing) this.deps.logger.warn({ taskId: r.id }, 'a task ended after it was recorded interrupted; its end is dropped');
    this.local.delete(r.id);
    entry.resolveDone();
    if (recorded) await this.announce(taskSnapshot(r, this.now()));
    this.kick();
  }

  /**
   * Group commit of ends: the ends recorded while a commit is in flight go together in the next
   * one (each row only while still running here, and their jobs completed, in one transaction).
   * Resolves true when this task's end was recorded.
   */
  private recordEnd(entry: LocalTask): Promise<boolean> {
    return new Promise((resolve) => {
      this.ending.push({ entry, resolve });
      if (!this.flushingEnds) void this.flushEnds();
    });
  }

  private async flushEnds(): Promise<void> {
    this.flushingEnds = true;
    while (this.ending.length) {
      const batch = this.ending.splice(0);
      let recorded = new Set<string>();
      try {
        recorded = await this.store.transaction(async (trx) => {
          const ok = new Set<string>();
          for (const { entry } of batch) {
            if (await this.store.recordEnd(trx, entry.record, this.deps.hostId)) ok.add(entry.record.id);
          }
          await this.deps.engine.complete(trx as unknown as Db, [...ok]);
          return ok;
        });
      } catch (err) {
        this.deps.logger.error({ err, tasks: batch.map((b) => b.entry.record.id) }, 'could not record the end of tasks');
      }
      for (const b of batch) b.resolve(recorded.has(b.entry.record.id));
    }
    this.flushingEnds = false;
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

  async list(ownerId: string, q: { state?: TaskState; limit?: number; cursor?: string } = {}): Promise<{ items: TaskSnapshot[]; nextCursor?: string }> {
    const limit = Math.min(Math.max(q.limit ?? 50, 1), 200);
    const before = taskCursor.decode(q.cursor);
    const rows = await this.reads.list(ownerId, { state: q.state, limit: limit + 1, before });
    const now = this.now();
    const page = rows.slice(0, limit).map((r) => taskSnapshot(this.local.get(r.id)?.record ?? r, now));
    const last = rows.length > limit ? rows[limit - 1] : undefined;
    return { items: page, ...(last ? { nextCursor: taskCursor.encode(last) } : {}) };
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
    if (entry) await this.killLocal(entry);
    else {
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

  /**
   * Interrupts the tasks the named hosts were running (their lease ran out, or this host stops),
   * each once, and fails their jobs so the engine never hands them out again. `unowned`: also
   * running tasks that name no host. Queued tasks stay in the shared queue. Returns how many.
   */
  async sweepHosts(hostIds: string[], unowned = false): Promise<number> {
    if (hostIds.length === 0 && !unowned) return 0;
    const now = this.now();
    const n = await this.store.transaction(async (trx) => {
      const rows = await this.store.interruptRunning(trx, hostIds, unowned, now, INTERRUPTED);
      await this.deps.engine.fail(
        trx as unknown as Db,
        rows.filter((r) => r.released_ms !== null).map((r) => r.id),
        'the host running this task stopped',
      );
      return rows.length;
    });
    if (n > 0) this.kick();
    return n;
  }

  /** At start: nothing of this host can be live yet (dead hosts are swept by the host lease); prunes. */
  async recover(): Promise<number> {
    await this.reads.prune(FINISHED_KEPT);
    return 0;
  }

  /** Host stop: nothing more is taken; this host's running tasks are recorded interrupted (never re-run). */
  async close(): Promise<void> {
    if (this.closing) return;
    this.closing = true;
    if (this.timer) clearInterval(this.timer);
    await this.ticking;
    const live = [...this.local.values()];
    for (const e of live) e.slot.kill();
    await this.sweepHosts([this.deps.hostId]).catch((err) => this.deps.logger.warn({ err }, 'could not record this host’s tasks interrupted'));
    for (const e of live) e.resolveDone();
    this.local.clear();
    if (this.lockClient) this.resign(this.lockClient);
    await this.deps.engine.stop().catch((err) => this.deps.logger.warn({ err }, 'job engine stop failed'));
  }
}
