import { type Kysely, sql } from 'kysely';
import type { Db } from '../storage/database';
import type { Row, TaskRecord } from './task.store';
import type { TaskState } from './task-submitter';

/**
 * The queries of the shared (PostgreSQL) task queue. Rows carry, besides a task's own fields,
 * the host running it, when the dispatcher handed it to the job engine, and whether another host
 * asked for it to be killed. Every method that takes a transaction runs inside the caller's, so
 * a row change and the job engine's own statements commit together.
 */

export interface SharedRow extends Row {
  /** the host running the task (null while queued) */
  host_id: string | null;
  /** when the dispatcher handed the task to the job engine (null until then) */
  released_ms: number | null;
  /** 1 when a host other than the runner asked for the task to be killed */
  kill_requested: number;
}
type Tables = { bg_tasks: SharedRow };
/** A transaction (or the database) of the shared queue's table. */
export type SharedTx = Kysely<Tables>;
/** What the fair policy needs of a live row. */
export type LiveRow = Pick<SharedRow, 'id' | 'owner' | 'priority' | 'state' | 'submitted_ms' | 'released_ms'>;

const LIVE: TaskState[] = ['queued', 'running'];

export class SharedTaskStore {
  private readonly db: SharedTx;

  constructor(db: Db) {
    this.db = db.withTables<Tables>();
  }

  transaction<T>(fn: (tx: SharedTx) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(fn);
  }

  /** Serializes admissions across hosts until the transaction ends. */
  async lockAdmission(tx: SharedTx, lockId: number): Promise<void> {
    await sql`select pg_advisory_xact_lock(${lockId})`.execute(tx);
  }

  /** Queued and running rows in submission order. */
  liveRows(tx: SharedTx = this.db): Promise<LiveRow[]> {
    return tx.selectFrom('bg_tasks').select(['id', 'owner', 'priority', 'state', 'submitted_ms', 'released_ms']).where('state', 'in', LIVE).orderBy('submitted_ms').orderBy('id').execute();
  }

  async insert(tx: SharedTx, records: TaskRecord[]): Promise<void> {
    if (records.length) await tx.insertInto('bg_tasks').values(records.map(rowOf)).execute();
  }

  /** Marks queued, not yet released tasks released; returns the ids it marked (each once). */
  async markReleased(tx: SharedTx, ids: string[], nowMs: number): Promise<string[]> {
    const rows = await tx.updateTable('bg_tasks').set({ released_ms: nowMs }).where('id', 'in', ids).where('state', '=', 'queued').where('released_ms', 'is', null).returning('id').execute();
    return rows.map((r) => r.id);
  }

  /** Marks the still-queued tasks among `ids` running on `hostId`; returns their rows. */
  claimRunning(tx: SharedTx, ids: string[], nowMs: number, hostId: string): Promise<SharedRow[]> {
    return tx.updateTable('bg_tasks').set({ state: 'running', started_ms: nowMs, host_id: hostId }).where('id', 'in', ids).where('state', '=', 'queued').returningAll().execute();
  }

  /** Records the run of a task running on `hostId`. */
  async setRunId(id: string, runId: string, hostId: string): Promise<void> {
    await this.db.updateTable('bg_tasks').set({ run_id: runId }).where('id', '=', id).where('state', '=', 'running').where('host_id', '=', hostId).execute();
  }

  /** Records a task's end, only while it is still running on `hostId`; true when recorded. */
  async recordEnd(tx: SharedTx, r: TaskRecord, hostId: string): Promise<boolean> {
    const u = await tx
      .updateTable('bg_tasks')
      .set({ state: r.state, finished_ms: r.finishedMs ?? null, output_text: r.output.text, output_truncated: r.output.truncated ? 1 : 0, error_code: r.error?.code ?? null, error_message: r.error?.message ?? null, run_id: r.runId ?? null })
      .where('id', '=', r.id)
      .where('state', '=', 'running')
      .where('host_id', '=', hostId)
      .executeTakeFirst();
    return Number(u.numUpdatedRows) > 0;
  }

  /** The rows among `ids` that have ended. */
  ended(ids: string[]): Promise<SharedRow[]> {
    return this.db.selectFrom('bg_tasks').selectAll().where('id', 'in', ids).where('state', 'not in', LIVE).execute();
  }

  /** The ids among `ids` another host asked to kill. */
  async killRequested(ids: string[]): Promise<string[]> {
    const rows = await this.db.selectFrom('bg_tasks').select('id').where('id', 'in', ids).where('kill_requested', '=', 1).execute();
    return rows.map((r) => r.id);
  }

  /** The states of the rows among `ids` that still exist. */
  states(ids: string[]): Promise<Array<{ id: string; state: string }>> {
    return this.db.selectFrom('bg_tasks').select(['id', 'state']).where('id', 'in', ids).execute();
  }

  /** Cancels a task still queued; returns its row, or undefined when it was no longer queued. */
  withdrawQueued(tx: SharedTx, id: string, nowMs: number, error: { code: string; message: string }): Promise<SharedRow | undefined> {
    return tx.updateTable('bg_tasks').set({ state: 'cancelled', finished_ms: nowMs, error_code: error.code, error_message: error.message }).where('id', '=', id).where('state', '=', 'queued').returningAll().executeTakeFirst();
  }

  /** Asks the host running a task to kill it. */
  async requestKill(id: string): Promise<void> {
    await this.db.updateTable('bg_tasks').set({ kill_requested: 1 }).where('id', '=', id).where('state', '=', 'running').execute();
  }

  /**
   * The tasks running on `hostIds` (and, when `unowned`, on no host) whose run is parked at a gate
   * and let go of (a run row naming no host, waiting at its gate: the agent's sweep released it)
   * go `waiting`, naming no host: they hold no running slot until an answer's host takes them
   * (`claimWaiting`). Returns them (their jobs are completed by the caller).
   */
  parkWaiting(tx: SharedTx, hostIds: string[], unowned: boolean): Promise<Array<{ id: string; released_ms: number | null }>> {
    return tx
      .updateTable('bg_tasks')
      .set({ state: 'waiting', host_id: null })
      .where('state', '=', 'running')
      .where((eb) => eb.or([...(hostIds.length ? [eb('host_id', 'in', hostIds)] : []), ...(unowned ? [eb('host_id', 'is', null)] : [])]))
      .where('run_id', 'in', sql<string>`(select id from runs where host_id is null and gate is not null and status in ('awaiting_step_approval', 'awaiting_plan_approval', 'awaiting_input'))`)
      .returning(['id', 'released_ms'])
      .execute();
  }

  /**
   * The task running on `hostId` gives its slot back while its run (`runId`, let go of in the same
   * transaction) waits at its gate: it goes `waiting`, naming no host, as after its host's stop;
   * not while another host asked to kill it (its kill then follows the running task). Its row's
   * `released_ms` (its job is completed by the caller), or undefined when it was not running here.
   */
  parkOne(tx: SharedTx, id: string, runId: string, hostId: string): Promise<{ released_ms: number | null } | undefined> {
    return tx.updateTable('bg_tasks').set({ state: 'waiting', host_id: null, run_id: runId }).where('id', '=', id).where('state', '=', 'running').where('host_id', '=', hostId).where('kill_requested', '=', 0).returning(['released_ms']).executeTakeFirst();
  }

  /**
   * Waiting tasks whose run a host of `hostIds` took (its answer claimed it) and was then
   * interrupted when that host died before taking the task too: they end interrupted.
   */
  interruptOrphanedWaiting(tx: SharedTx, hostIds: string[], nowMs: number, error: { code: string; message: string }): Promise<Array<{ id: string }>> {
    if (hostIds.length === 0) return Promise.resolve([]);
    return tx
      .updateTable('bg_tasks')
      .set({ state: 'interrupted', finished_ms: nowMs, error_code: error.code, error_message: error.message })
      .where('state', '=', 'waiting')
      .where('run_id', 'in', sql<string>`(select id from runs where status = 'interrupted' and host_id in (${sql.join(hostIds)}))`)
      .returning(['id'])
      .execute();
  }

  /** Takes the waiting task of run `runId` onto `hostId`, running (once: only while it waits); its row, or undefined. */
  claimWaiting(runId: string, hostId: string): Promise<SharedRow | undefined> {
    return this.db.updateTable('bg_tasks').set({ state: 'running', host_id: hostId }).where('run_id', '=', runId).where('state', '=', 'waiting').returningAll().executeTakeFirst();
  }

  /**
   * The tasks running on `hostIds` (and, when `unowned`, on no host) whose body had not begun go
   * back to `queued`, naming no host, still released (their job is handed out again by the caller,
   * so each keeps the running slot it held): no run under the task's id (a task's run takes its id,
   * and a step takes effect only after its run's row commits), none recorded, no kill asked for, and
   * not among `except` (bodies of this host that may still be writing their run). Conditional on
   * `running` on those hosts, so of two sweeps at once only one puts a task back. Returns their ids.
   */
  async requeueUnbegun(tx: SharedTx, hostIds: string[], unowned: boolean, except: string[] = []): Promise<string[]> {
    if (hostIds.length === 0 && !unowned) return [];
    let q = tx
      .updateTable('bg_tasks')
      .set({ state: 'queued', host_id: null, started_ms: null })
      .where('state', '=', 'running')
      .where((eb) => eb.or([...(hostIds.length ? [eb('host_id', 'in', hostIds)] : []), ...(unowned ? [eb('host_id', 'is', null)] : [])]))
      .where('run_id', 'is', null)
      .where('kill_requested', '=', 0)
      .where('released_ms', 'is not', null)
      .where(sql<boolean>`not exists (select 1 from runs where runs.id = bg_tasks.id)`);
    if (except.length) q = q.where('id', 'not in', except);
    const rows = await q.returning('id').execute();
    return rows.map((r) => r.id);
  }

  /** Marks the tasks running on `hostIds` (and, when `unowned`, on no host) interrupted; returns them. */
  interruptRunning(tx: SharedTx, hostIds: string[], unowned: boolean, nowMs: number, error: { code: string; message: string }): Promise<Array<{ id: string; released_ms: number | null }>> {
    return tx
      .updateTable('bg_tasks')
      .set({ state: 'interrupted', finished_ms: nowMs, error_code: error.code, error_message: error.message })
      .where('state', '=', 'running')
      .where((eb) => eb.or([...(hostIds.length ? [eb('host_id', 'in', hostIds)] : []), ...(unowned ? [eb('host_id', 'is', null)] : [])]))
      .returning(['id', 'released_ms'])
      .execute();
  }
}

function rowOf(t: TaskRecord): SharedRow {
  return {
    id: t.id,
    owner: t.ownerId,
    kind: t.kind,
    priority: t.priority,
    state: t.state,
    workflow_id: t.workflowId,
    workflow_version: t.workflowVersion,
    run_id: t.runId ?? null,
    schedule_id: t.scheduleId ?? null,
    trigger_id: t.triggerId ?? null,
    inputs: JSON.stringify(t.inputs),
    permission_mode: t.permissionMode,
    submitted_ms: t.submittedMs,
    started_ms: t.startedMs ?? null,
    finished_ms: t.finishedMs ?? null,
    output_text: t.output.text,
    output_truncated: t.output.truncated ? 1 : 0,
    error_code: t.error?.code ?? null,
    error_message: t.error?.message ?? null,
    files: t.files?.length ? JSON.stringify(t.files) : null,
    host_id: null,
    released_ms: null,
    kill_requested: 0,
  };
}
