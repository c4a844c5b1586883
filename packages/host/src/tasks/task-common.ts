import { FengYuError, PERMISSION_MODES, type PermissionMode, TASK_KINDS, TASK_PRIORITIES, } from '@fengyu/protocol';
import type { Logger } from 'pino';
import type { KeptSeal } from '../secrets/vault';
import type { CancelSlot } from './canceller';
import type { TaskFile, TaskRecord, TaskStore } from './task.store';
import type {
  CapacityScope,
  PreparedSubmission,
  SubmitTaskRequest,
  TaskPriority,
  TaskSnapshot,
  TaskState,
} from './task-submitter';

/**
 * What both task registries share (the single-host one over the SQLite file and the one over a
 * shared PostgreSQL database): the body a task kind runs, output capping, the finished-task
 * listeners, cursors, the kill escalation, a new task's record and its snapshot, and the checks of
 * a submission made before anything is queued.
 */
/** Output kept per task, in UTF-8 bytes. */
export const OUTPUT_CAP_BYTES = 64 * 1024;
/** Finished tasks kept across restarts. */
export const FINISHED_KEPT = 100;
/** Kill escalation: cooperative grace, then SIGTERM grace, then SIGKILL grace (each ≤ 5 s). */
export const KILL_GRACES_MS = { cooperative: 2000, term: 2000, kill: 1000 } as const;

/** The end of a task that was running when its host stopped (it is never run again). */
export const RUNNING_INTERRUPTED = { code: 'task_interrupted', message: 'The host stopped while this task was running; it is not run again.' };
/** The states a task never leaves. */
export const TERMINAL: ReadonlySet<TaskState> = new Set(['completed', 'failed', 'cancelled', 'interrupted']);

export interface BodyHooks {
  /** Cancellation of this task: attach cancellers here (race-safe). */
  slot: CancelSlot;
  /** Records the run the body started (persisted before it resolves). */
  onRun(runId: string): Promise<void>;
  /** The run `runId` waits at a gate: the task goes `waiting` and its slot is given back. */
  park(runId: string): void;
  /** The gate was answered: resolves once the task holds a running slot again (it re-enters its queue). */
  unpark(): Promise<void>;
}

export interface BodyOutcome {
  state: 'completed' | 'failed' | 'cancelled' | 'interrupted';
  text: string;
  error?: { code: string; message: string };
}

/** What a task kind does: checks a submission (before anything is queued) and runs the body. */
export interface TaskBody {
  /**
   * Throws a FengYuError naming the problem; returns the version that will run and the bound inputs
   * (secret ones as the marker), with the secret values to keep under `taskId` (written with the
   * task's row by the executor, only when the task is admitted).
   */
  prepare(req: SubmitTaskRequest): Promise<{ workflowVersion: number; inputs: Record<string, unknown>; files?: TaskFile[]; taskId?: string; seal?: KeptSeal }>;
  run(task: TaskRecord, hooks: BodyHooks): Promise<BodyOutcome>;
  /** Follows the task's run (already started, continued after a host stop) to its end. */
  follow?(task: TaskRecord, hooks: BodyHooks): Promise<BodyOutcome>;
  /** Cancels the task's run where it stands (a run parked at its gate ends cancelled). */
  cancel?(task: TaskRecord): Promise<void>;
}

/** The counters and histogram the executor feeds (gauges read `capacity()`). */
export interface TaskMetricsSink {
  dispatched(priority: TaskPriority): void;
  rejected(priority: TaskPriority, scope: CapacityScope): void;
  queueWait(priority: TaskPriority, outcome: 'executed' | 'cancelled', seconds: number): void;
}

/** The processes a run started: how many are alive, and a signal to all of them. */
export interface ProcessKiller {
  count(runId: string): number;
  signal(runId: string, signal: 'SIGTERM' | 'SIGKILL'): number;
}


/** Cuts text to at most `cap` UTF-8 bytes without splitting a character. */
export function capText(text: string, cap = OUTPUT_CAP_BYTES): { text: string; truncated: boolean } {
  // a UTF-16 code unit is at most 3 UTF-8 bytes: short text fits without being encoded
  if (text.length * 3 <= cap) return { text, truncated: false };
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= cap) return { text, truncated: false };
  let end = cap;
  while (end > 0 && ((buf[end] as number) & 0xc0) === 0x80) end -= 1;
  return { text: buf.subarray(0, end).toString('utf8'), truncated: true };
}

/** Polls `done` every 20 ms for up to `ms`; true when it held. */
async function waitFor(done: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (!done()) {
    if (Date.now() >= end) return false;
    await sleep(20);
  }
  return true;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms).unref?.());
}

/**
 * What both executors do when a task ends: tell the listeners (a listener that throws is logged,
 * never rethrown) and, every 32 ends, prune the finished tasks beyond the newest `FINISHED_KEPT`.
 */
export class FinishedTasks {
  readonly listeners = new Set<(t: TaskSnapshot) => void>();
  private sincePrune = 0;

  constructor(
    private readonly prune: (keep: number) => Promise<void>,
    private readonly logger: Logger,
  ) {}

  on(listener: (task: TaskSnapshot) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  notify(snap: TaskSnapshot): void {
    for (const l of this.listeners) {
      try {
        l(snap);
      } catch (err) {
        this.logger.warn({ err }, 'task listener failed');
      }
    }
  }

  /** Counts one end; every 32nd returns the prune it starts (the others return nothing to wait for). */
  counted(): Promise<void> | undefined {
    this.sincePrune += 1;
    if (this.sincePrune < 32) return undefined;
    this.sincePrune = 0;
    return this.prune(FINISHED_KEPT).catch((err) => this.logger.warn({ err }, 'pruning finished tasks failed'));
  }
}

/** A list page's cursor: the last task's submission time and id, base64url (opaque to clients). */
export const taskCursor = {
  encode: (r: TaskRecord): string => Buffer.from(`${r.submittedMs}|${r.id}`).toString('base64url'),
  /** Undefined for no cursor; a malformed one is refused naming the field. */
  decode(cursor: string | undefined): { submittedMs: number; id: string } | undefined {
    if (!cursor) return undefined;
    const [ms, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
    if (!ms || !id || !Number.isFinite(Number(ms))) throw new FengYuError('task_field_invalid', { field: 'cursor', allowed: 'a cursor from a previous page' });
    return { submittedMs: Number(ms), id };
  },
};

/** The record when it exists and belongs to the owner (looked up by `record`); else task_not_found. */
export async function ownedTask(record: (ownerId: string, id: string) => Promise<TaskRecord | undefined>, ownerId: string, id: string): Promise<TaskRecord> {
  const r = typeof id === 'string' ? await record(ownerId, id) : undefined;
  if (!r) throw new FengYuError('task_not_found', { id: String(id) });
  return r;
}

/**
 * The kill of a running task: a cooperative cancel; after its grace, SIGTERM to the processes
 * the task's run started (also those that left their command's process group, which a
 * cooperative cancel does not reach); after another grace, SIGKILL. A task still not ended then
 * is recorded cancelled (`endCancelled`).
 */
export async function killRunningTask(k: {
  slot: CancelSlot;
  done: Promise<void>;
  settled: () => boolean;
  /** read after the cooperative grace: the run may have started meanwhile */
  runId: () => string | undefined;
  killer: ProcessKiller | undefined;
  graces: { cooperative: number; term: number; kill: number };
  endCancelled: () => Promise<void>;
}): Promise<void> {
  const g = k.graces;
  await k.slot.kill();
  await Promise.race([k.done, sleep(g.cooperative)]);
  const killer = k.killer;
  const runId = k.runId();
  if (killer && runId && killer.count(runId) > 0) {
    killer.signal(runId, 'SIGTERM');
    const gone = await waitFor(() => killer.count(runId) === 0 && k.settled(), g.term);
    if (!gone) {
      killer.signal(runId, 'SIGKILL');
      await waitFor(() => killer.count(runId) === 0 && k.settled(), g.kill);
    }
  } else if (!k.settled()) await Promise.race([k.done, sleep(g.term)]);
  if (!k.settled()) await k.endCancelled();
  await Promise.race([k.done, sleep(g.kill)]);
}

/** A new task's record: the request as prepared by its body, not yet started. */
export function newTaskRecord(id: string, req: SubmitTaskRequest, prepared: Pick<PreparedSubmission, 'workflowVersion' | 'inputs' | 'files'>, state: 'queued' | 'running', nowMs: number, defaultMode: PermissionMode | undefined): TaskRecord {
  const r: TaskRecord = {
    id,
    ownerId: req.ownerId,
    kind: req.kind,
    priority: req.priority,
    state,
    workflowId: req.workflowId,
    workflowVersion: prepared.workflowVersion,
    inputs: prepared.inputs,
    permissionMode: req.permissionMode ?? defaultMode ?? 'ask',
    submittedMs: nowMs,
    output: { text: '', truncated: false },
  };
  // set in place, not spread from a temporary object per field (this runs once per task)
  if (req.scheduleId) r.scheduleId = req.scheduleId;
  if (req.triggerId) r.triggerId = req.triggerId;
  if (prepared.files?.length) r.files = prepared.files;
  return r;
}

/** A copy of a task record that later changes to the record do not reach. */
export function copyRecord(r: TaskRecord): TaskRecord {
  const copy = { ...r, output: { text: r.output.text, truncated: r.output.truncated } };
  if (r.error) copy.error = { code: r.error.code, message: r.error.message };
  return copy;
}

/** The snapshot of a task record at `now` (one shape for REST, tools and the UI). */
export function taskSnapshot(r: TaskRecord, now: number): TaskSnapshot {
  const waitEnd = r.startedMs ?? r.finishedMs ?? now;
  // built field by field in the answer's key order (no temporary object per optional field: once per task's end)
  const s: TaskSnapshot = { id: r.id, ownerId: r.ownerId, kind: r.kind, priority: r.priority, state: r.state, queued: r.state === 'queued', workflowId: r.workflowId, workflowVersion: r.workflowVersion } as TaskSnapshot;
  if (r.runId) s.runId = r.runId;
  if (r.scheduleId) s.scheduleId = r.scheduleId;
  if (r.triggerId) s.triggerId = r.triggerId;
  s.submittedAt = new Date(r.submittedMs).toISOString();
  if (r.startedMs !== undefined) s.startedAt = new Date(r.startedMs).toISOString();
  if (r.finishedMs !== undefined) s.finishedAt = new Date(r.finishedMs).toISOString();
  s.queueWaitMs = Math.max(0, waitEnd - r.submittedMs);
  if (r.startedMs !== undefined) s.runDurationMs = Math.max(0, (r.finishedMs ?? now) - r.startedMs);
  s.output = { text: r.output.text, truncated: r.output.truncated };
  if (r.error) s.error = { code: r.error.code, message: r.error.message };
  return s;
}

/** Checks the fields every kind shares; throws a 400 naming the field. */
export function checkTaskRequest(req: SubmitTaskRequest): void {
  if (!TASK_PRIORITIES.includes(req.priority)) {
    throw new FengYuError('task_field_invalid', { field: 'priority', allowed: TASK_PRIORITIES.join(', ') }, [{ code: 'task_field_invalid', field: 'priority', params: { field: 'priority', allowed: TASK_PRIORITIES.join(', ') } }]);
  }
  if (!TASK_KINDS.includes(req.kind)) throw new FengYuError('task_field_invalid', { field: 'kind', allowed: TASK_KINDS.join(', ') });
  if (req.permissionMode !== undefined && !PERMISSION_MODES.includes(req.permissionMode)) {
    throw new FengYuError('task_field_invalid', { field: 'permissionMode', allowed: PERMISSION_MODES.join(', ') }, [{ code: 'task_field_invalid', field: 'permissionMode', params: { field: 'permissionMode', allowed: PERMISSION_MODES.join(', ') } }]);
  }
  if (typeof req.workflowId !== 'string' || req.workflowId === '') throw new FengYuError('task_field_invalid', { field: 'workflowId', allowed: 'a workflow id' });
  if (req.inputs !== undefined && (req.inputs === null || typeof req.inputs !== 'object' || Array.isArray(req.inputs))) {
    throw new FengYuError('task_field_invalid', { field: 'inputs', allowed: 'a JSON object' });
  }
}


/** A task's end as a promise, and what settles it (both executors wait on a task through it). */
export function doneSignal(): { done: Promise<void>; resolveDone: () => void } {
  let resolveDone!: () => void;
  const done = new Promise<void>((r) => {
    resolveDone = r;
  });
  return { done, resolveDone };
}

/**
 * Writes a body's outcome into the task's record: a killed task that did not complete is
 * `cancelled`; the end time, the capped output and the error (`interrupted` names the host's stop).
 */
export function applyOutcome(r: TaskRecord, outcome: BodyOutcome, killed: boolean, nowMs: number, interrupted = RUNNING_INTERRUPTED): void {
  r.state = killed && outcome.state !== 'completed' ? 'cancelled' : outcome.state;
  r.finishedMs = nowMs;
  r.output = capText(outcome.text);
  if (r.state === 'cancelled') r.error = { code: 'task_cancelled', message: 'The task was killed.' };
  else if (r.state === 'interrupted') r.error = outcome.error ?? interrupted;
  else if (outcome.error) r.error = outcome.error;
}

/**
 * One page of the owner's tasks, newest first (limit 1..200, default 50), each as `current`
 * reports it (a live task's own view); `nextCursor` when more follow.
 */
export async function listTasks(
  store: Pick<TaskStore, 'list'>,
  ownerId: string,
  q: { state?: TaskState; limit?: number; cursor?: string },
  current: (r: TaskRecord) => TaskRecord,
  nowMs: number,
): Promise<{ items: TaskSnapshot[]; nextCursor?: string }> {
  const limit = Math.min(Math.max(q.limit ?? 50, 1), 200);
  const before = taskCursor.decode(q.cursor);
  const rows = await store.list(ownerId, { state: q.state, limit: limit + 1, before });
  const page = rows.slice(0, limit).map((r) => taskSnapshot(current(r), nowMs));
  const last = rows.length > limit ? rows[limit - 1] : undefined;
  return { items: page, ...(last ? { nextCursor: taskCursor.encode(last) } : {}) };
}

/**
 * Waits up to `timeoutMs` for any or all of the tasks to end; `ends` holds each live task's end
 * (undefined: already ended, so `any` is settled at once). True when the time ran out first.
 */
export async function awaitEnds(ends: Array<Promise<void> | undefined>, mode: 'any' | 'all', timeoutMs: number): Promise<boolean> {
  const pending = ends.filter((p): p is Promise<void> => p !== undefined);
  if (pending.length === 0 || (mode === 'any' && pending.length < ends.length)) return false;
  const settled = mode === 'all' ? Promise.all(pending).then(() => undefined) : Promise.race(pending);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'timeout'>((r) => {
    timer = setTimeout(() => r('timeout'), timeoutMs);
  });
  const timedOut = (await Promise.race([settled, expired])) === 'timeout';
  clearTimeout(timer);
  return timedOut;
}
