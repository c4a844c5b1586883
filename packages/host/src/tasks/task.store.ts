import type { PermissionMode } from '@fengyu/protocol';
import { CompiledQuery, type Kysely } from 'kysely';
import { type Db, dialectOf, preparedOf, rawOf, statement } from '../storage/database';
import type { EndedTask, EndWriter, TaskFile, TaskKind, TaskPriority, TaskState } from './task-submitter';

export type { TaskFile };

/**
 * Where task records live. The executor talks only to this interface, so a shared deployment can
 * keep them in another database without touching the executor or the policy.
 */

export interface TaskRecord {
  id: string;
  ownerId: string;
  kind: TaskKind;
  priority: TaskPriority;
  state: TaskState;
  workflowId: string;
  workflowVersion: number;
  runId?: string;
  scheduleId?: string;
  triggerId?: string;
  inputs: Record<string, unknown>;
  /** Uploads granted to the task's run (`files` of a run request); absent: none. */
  files?: TaskFile[];
  permissionMode: PermissionMode;
  submittedMs: number;
  startedMs?: number;
  finishedMs?: number;
  output: { text: string; truncated: boolean };
  error?: { code: string; message: string };
}

export interface TaskListQuery {
  state?: TaskState;
  limit: number;
  /** Only tasks submitted before this cursor (exclusive), for paging. */
  before?: { submittedMs: number; id: string };
}

export interface SaveOptions {
  /**
   * False when nobody is blocked on this write (a start time, an end whose slot is already
   * free): it may wait up to `LAZY_COMMIT_MS` to share a commit with other writes. Default true:
   * committed in this turn of the event loop (on SQLite at once when it is the turn's first).
   */
  soon?: boolean;
  /**
   * A body starts once this write is committed (a submission given a free slot): on SQLite it is
   * committed at once even after other commits of the turn, so the start never waits for the rest
   * of the turn's callbacks.
   */
  starts?: boolean;
}

/** The longest a write nobody waits on is held back to share a commit. */
export const LAZY_COMMIT_MS = 2;

/** Rows another domain writes with a task's creation: in a Kysely transaction, or synchronously in an open SQLite one. */
export interface CreationRows {
  writeIn(trx: Db): Promise<void>;
  writeWithin(): void;
}

export interface TaskStore {
  /** Persists the task as it is now (created, or a state change: start, run id, end); resolves once committed. */
  save(task: TaskRecord, options?: SaveOptions): Promise<void>;
  /**
   * SQLite only: writes the task synchronously inside the caller's open transaction on the same
   * connection (so a producer commits its own rows and the task's atomically). Undefined elsewhere.
   */
  saveWithin?(task: TaskRecord): void;
  /**
   * Writes the task (its creation) and the rows `also` writes in the same transaction (the secret
   * input values it keeps, into the vault): both commit or neither does. Resolves once committed.
   * Absent (a test's store): the task keeps no such value, and its run sees the marker.
   */
  saveWith?(task: TaskRecord, also: CreationRows): Promise<void>;
  /**
   * SQLite only: registers a writer run synchronously inside the commit that records a task's
   * end, once per ending task (its rows commit with the end, or not at all). It must not throw
   * (one that does is skipped, as is every writer when the end is written by another path: the
   * writer then never sees that task). Returns the unregister.
   */
  onEndWithin?(writer: EndWriter): () => void;
  get(id: string): Promise<TaskRecord | undefined>;
  /** The owner's tasks, newest first. */
  list(ownerId: string, query: TaskListQuery): Promise<TaskRecord[]>;
  /**
   * Tasks whose run waits in the inbox (`waiting`): not interrupted by a stop, since their run is
   * parked at its gate (single host only; a shared queue keeps such a task running).
   */
  waiting?(): Promise<TaskRecord[]>;
  /** Marks every task in `states` (default queued and running) interrupted; returns them. */
  interruptLive(nowMs: number, error: { code: string; message: string }, states?: ReadonlyArray<'queued' | 'running'>): Promise<TaskRecord[]>;
  /** The tasks stored `queued` (their body never started), oldest submission first. */
  queued?(): Promise<TaskRecord[]>;
  /**
   * Tasks stored `running` whose run was never written (a task's run takes the task's id) go back
   * to `queued`: their body had not begun a run, so nothing of it can have taken effect. Returns them.
   */
  requeueUnbegun?(): Promise<number>;
  /** Deletes finished tasks beyond the newest `keep`. */
  prune(keep: number): Promise<void>;
}

export interface Row {
  id: string;
  owner: string;
  kind: string;
  priority: string;
  state: string;
  workflow_id: string;
  workflow_version: number;
  run_id: string | null;
  schedule_id: string | null;
  trigger_id: string | null;
  inputs: string;
  permission_mode: string;
  submitted_ms: number;
  started_ms: number | null;
  finished_ms: number | null;
  output_text: string;
  output_truncated: number;
  error_code: string | null;
  error_message: string | null;
  files: string | null;
}

type Tables = { bg_tasks: Row; runs: { id: string } };

export function fromRow(r: Row): TaskRecord {
  return {
    id: r.id,
    ownerId: r.owner,
    kind: r.kind as TaskKind,
    priority: r.priority as TaskPriority,
    state: r.state as TaskState,
    workflowId: r.workflow_id,
    workflowVersion: r.workflow_version,
    ...(r.run_id ? { runId: r.run_id } : {}),
    ...(r.schedule_id ? { scheduleId: r.schedule_id } : {}),
    ...(r.trigger_id ? { triggerId: r.trigger_id } : {}),
    inputs: JSON.parse(r.inputs),
    permissionMode: r.permission_mode as PermissionMode,
    submittedMs: r.submitted_ms,
    ...(r.started_ms !== null ? { startedMs: r.started_ms } : {}),
    ...(r.finished_ms !== null ? { finishedMs: r.finished_ms } : {}),
    output: { text: r.output_text, truncated: r.output_truncated === 1 },
    ...(r.error_code ? { error: { code: r.error_code, message: r.error_message ?? '' } } : {}),
    ...(r.files ? { files: JSON.parse(r.files) as TaskFile[] } : {}),
  };
}

const COLUMNS = 'id, owner, kind, priority, state, workflow_id, workflow_version, run_id, schedule_id, trigger_id, inputs, permission_mode, submitted_ms, started_ms, finished_ms, output_text, output_truncated, error_code, error_message, files';
/** Every row of a batch travels as one JSON array parameter, so the statement text stays short and constant. */
const SELECT_ROWS = `select ${Array.from({ length: 20 }, (_, i) => `json_extract(value, '$[${i}]')`).join(', ')} from json_each(?) where true`;
const ON_CONFLICT =
  'on conflict(id) do update set state = excluded.state, run_id = excluded.run_id, started_ms = excluded.started_ms, finished_ms = excluded.finished_ms, output_text = excluded.output_text, output_truncated = excluded.output_truncated, error_code = excluded.error_code, error_message = excluded.error_message';

const UPSERT = `insert into bg_tasks (${COLUMNS}) ${SELECT_ROWS} ${ON_CONFLICT}`;
/** One row as plain parameters (SQLite: cheaper per row than the JSON form). */
const UPSERT_ONE = `insert into bg_tasks (${COLUMNS}) values (${Array.from({ length: 20 }, () => '?').join(', ')}) ${ON_CONFLICT}`;

/**
 * Finished tasks beyond the newest `keep` (by end time, then id), in one statement: every finished
 * row ordered before the `keep`-th newest (the parameter is `keep - 1`, its offset). Nothing goes
 * while fewer than `keep` have finished.
 */
const PRUNE_FINISHED =
  'delete from bg_tasks where finished_ms is not null and (finished_ms, id) < (select finished_ms, id from bg_tasks where finished_ms is not null order by finished_ms desc, id desc limit 1 offset ?)';

/** Times are kept to the microsecond on SQLite (REAL values in its integer columns); whole milliseconds on PostgreSQL (bigint). */
function ms(v: number | undefined, whole: boolean): number | null {
  if (v === undefined) return null;
  return whole ? Math.round(v) : v;
}

function params(t: TaskRecord, inputs: string, wholeMs = false): unknown[] {
  return [
    t.id,
    t.ownerId,
    t.kind,
    t.priority,
    t.state,
    t.workflowId,
    t.workflowVersion,
    t.runId ?? null,
    t.scheduleId ?? null,
    t.triggerId ?? null,
    inputs,
    t.permissionMode,
    ms(t.submittedMs, wholeMs),
    ms(t.startedMs, wholeMs),
    ms(t.finishedMs, wholeMs),
    t.output.text,
    t.output.truncated ? 1 : 0,
    t.error?.code ?? null,
    t.error?.message ?? null,
    t.files?.length ? JSON.stringify(t.files) : null,
  ];
}

interface Waiter {
  resolve: () => void;
  reject: (err: unknown) => void;
}

/**
 * The single-host store: one SQLite table. Writes are group-committed (the latest state of each
 * task, one transaction, with the end writers' rows), and each save resolves only after its
 * commit (durable before anyone is told). The first write someone waits on in a turn of the event
 * loop is committed at once, with every write pending then, and so is every write a body's start
 * waits on (a submission's task starts in the callback that admitted it, not after the rest of the
 * turn's I/O callbacks); the turn's other waited writes share one commit at its end, and writes
 * nobody waits on wait ≤ `LAZY_COMMIT_MS` to share one.
 */
export class SqliteTaskStore implements TaskStore {
  private readonly db: Kysely<Tables>;
  private pending = new Map<string, unknown[]>();
  private waiters: Waiter[] = [];
  private scheduled = false;
  private lazy: NodeJS.Timeout | undefined;
  /** A write was committed at once in the current turn: the turn's later writes share its end's commit. */
  private committedInTurn = false;
  private readonly turnEnded = (): void => {
    this.committedInTurn = false;
  };
  /** Serialized inputs by task id while the task is live (they never change). */
  private readonly inputsJson = new Map<string, string>();
  private readonly endWriters = new Set<EndWriter>();
  /** The ends among the pending writes (only while an end writer is registered). */
  private ends = new Map<string, EndedTask>();
  /** Writes rows one prepared upsert each and runs the end writers, in one transaction (SQLite). */
  private commitRows?: (rows: unknown[][], ends: Iterable<EndedTask>) => void;

  private readonly postgres: boolean;

  constructor(private readonly root: Db) {
    const db = root;
    this.db = db.withTables<Tables>();
    this.postgres = dialectOf(db) === 'postgres';
  }

  private paramsOf(t: TaskRecord): unknown[] {
    let inputs = this.inputsJson.get(t.id);
    if (inputs === undefined) {
      inputs = JSON.stringify(t.inputs);
      this.inputsJson.set(t.id, inputs);
    }
    if (t.finishedMs !== undefined) this.inputsJson.delete(t.id);
    return params(t, inputs, this.postgres);
  }

  save(t: TaskRecord, options?: SaveOptions): Promise<void> {
    this.pending.set(t.id, this.paramsOf(t));
    if (t.finishedMs !== undefined && this.endWriters.size > 0) {
      const ended: EndedTask = { id: t.id, kind: t.kind, state: t.state, finishedMs: t.finishedMs };
      if (t.error) ended.error = t.error;
      this.ends.set(t.id, ended);
    }
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      if (options?.soon === false) {
        if (!this.scheduled && !this.lazy) this.lazy = setTimeout(() => void this.flush(), LAZY_COMMIT_MS);
      } else if (this.commitsNow(options?.starts === true)) {
        if (!this.committedInTurn) {
          this.committedInTurn = true;
          setImmediate(this.turnEnded);
        }
        void this.flush();
      } else if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  /** Whether a write someone waits on is committed at once: the turn's first or one a start waits on, on SQLite, outside another transaction. */
  private commitsNow(starts: boolean): boolean {
    if (this.postgres || (this.committedInTurn && !starts)) return false;
    const raw = rawOf(this.root);
    return raw !== undefined && !raw.inTransaction;
  }

  async saveWith(t: TaskRecord, also: CreationRows): Promise<void> {
    const row = this.paramsOf(t);
    const raw = this.postgres ? undefined : rawOf(this.root);
    if (raw && !raw.inTransaction) {
      // synchronous on SQLite: no other write (a start of this task) can come between the row and its values
      raw.transaction(() => {
        statement(raw, UPSERT_ONE).run(row);
        also.writeWithin();
      })();
      return;
    }
    // a Kysely transaction holds the connection: this one queues behind it, as every later write does
    await this.root.transaction().execute(async (trx) => {
      if (this.postgres) await this.upsertValues([row], trx as unknown as Kysely<Tables>);
      else await trx.executeQuery(CompiledQuery.raw(UPSERT, [JSON.stringify([row])]));
      await also.writeIn(trx);
    });
  }

  saveWithin(t: TaskRecord): void {
    const raw = rawOf(this.root);
    if (!raw?.inTransaction) throw new Error('saveWithin needs an open transaction on the SQLite connection');
    statement(raw, UPSERT_ONE).run(this.paramsOf(t));
  }

  onEndWithin(writer: EndWriter): () => void {
    this.endWriters.add(writer);
    return () => this.endWriters.delete(writer);
  }

  private runEndWriters(ends: Iterable<EndedTask>): void {
    for (const e of ends) {
      for (const w of this.endWriters) {
        try {
          w(e);
        } catch {
          // a writer must not throw; the task's end commits regardless
        }
      }
    }
  }

  private async flush(): Promise<void> {
    const rows = [...this.pending.values()];
    const waiters = this.waiters;
    const ends = this.ends;
    this.pending = new Map();
    this.ends = new Map();
    this.waiters = [];
    this.scheduled = false;
    if (this.lazy) clearTimeout(this.lazy);
    this.lazy = undefined;
    if (rows.length === 0) return;
    try {
      // one transaction for the whole batch
      if (this.postgres) await this.upsertValues(rows);
      else {
        // prepared once on SQLite, with the end writers in the same transaction; through Kysely
        // (no end writers) while one of its transactions holds the connection
        const raw = rawOf(this.root);
        if (raw && !raw.inTransaction) {
          if (!this.commitRows) {
            const one = statement(raw, UPSERT_ONE);
            this.commitRows = raw.transaction((batch: unknown[][], ended: Iterable<EndedTask>) => {
              for (const r of batch) one.run(r);
              this.runEndWriters(ended);
            });
          }
          // one row and no end writer: the statement is its own transaction
          if (rows.length === 1 && ends.size === 0) statement(raw, UPSERT_ONE).run(rows[0]);
          else this.commitRows(rows, ends.values());
        } else await this.db.executeQuery(CompiledQuery.raw(UPSERT, [JSON.stringify(rows)]));
      }
      for (const w of waiters) w.resolve();
    } catch (err) {
      for (const w of waiters) w.reject(err);
    }
  }

  /** The same upsert as a multi-row insert (engines without SQLite's JSON table functions). */
  private async upsertValues(rows: unknown[][], db: Kysely<Tables> = this.db): Promise<void> {
    const names = COLUMNS.split(', ') as Array<keyof Row>;
    const values = rows.map((r) => Object.fromEntries(names.map((n, i) => [n, r[i]])) as unknown as Row);
    await db
      .insertInto('bg_tasks')
      .values(values)
      .onConflict((oc) =>
        oc.column('id').doUpdateSet((eb) => ({
          state: eb.ref('excluded.state'),
          run_id: eb.ref('excluded.run_id'),
          started_ms: eb.ref('excluded.started_ms'),
          finished_ms: eb.ref('excluded.finished_ms'),
          output_text: eb.ref('excluded.output_text'),
          output_truncated: eb.ref('excluded.output_truncated'),
          error_code: eb.ref('excluded.error_code'),
          error_message: eb.ref('excluded.error_message'),
        })),
      )
      .execute();
  }

  async get(id: string): Promise<TaskRecord | undefined> {
    const stmt = preparedOf(this.root, 'select * from bg_tasks where id = ?');
    if (stmt) {
      const row = stmt.get(id) as Row | undefined;
      return row ? fromRow(row) : undefined;
    }
    const r = await this.db.selectFrom('bg_tasks').selectAll().where('id', '=', id).executeTakeFirst();
    return r ? fromRow(r) : undefined;
  }

  async list(ownerId: string, q: TaskListQuery): Promise<TaskRecord[]> {
    let query = this.db.selectFrom('bg_tasks').selectAll().where('owner', '=', ownerId);
    if (q.state) query = query.where('state', '=', q.state);
    if (q.before) {
      const b = q.before;
      query = query.where((eb) => eb.or([eb('submitted_ms', '<', b.submittedMs), eb.and([eb('submitted_ms', '=', b.submittedMs), eb('id', '<', b.id)])]));
    }
    const rows = await query.orderBy('submitted_ms', 'desc').orderBy('id', 'desc').limit(q.limit).execute();
    return rows.map(fromRow);
  }

  async interruptLive(nowMs: number, error: { code: string; message: string }, states: ReadonlyArray<'queued' | 'running'> = ['queued', 'running']): Promise<TaskRecord[]> {
    // writes still waiting for their group commit land first, so none of them overwrites this
    if (this.pending.size > 0) await this.flush();
    const live = await this.db.selectFrom('bg_tasks').selectAll().where('state', 'in', [...states]).execute();
    if (live.length === 0) return [];
    await this.db
      .updateTable('bg_tasks')
      .set({ state: 'interrupted', finished_ms: ms(nowMs, this.postgres), error_code: error.code, error_message: error.message })
      .where('state', 'in', [...states])
      .execute();
    return live.map((r) => ({ ...fromRow(r), state: 'interrupted' as const, finishedMs: nowMs, error }));
  }

  async waiting(): Promise<TaskRecord[]> {
    if (this.pending.size > 0) await this.flush();
    return (await this.db.selectFrom('bg_tasks').selectAll().where('state', '=', 'waiting').execute()).map(fromRow);
  }

  async requeueUnbegun(): Promise<number> {
    if (this.pending.size > 0) await this.flush();
    const r = await this.db
      .updateTable('bg_tasks')
      .set({ state: 'queued', started_ms: null })
      .where('state', '=', 'running')
      .where('run_id', 'is', null)
      .where(({ not, exists, selectFrom }) => not(exists(selectFrom('runs').select('runs.id').whereRef('runs.id', '=', 'bg_tasks.id'))))
      .executeTakeFirst();
    return Number(r.numUpdatedRows);
  }

  async queued(): Promise<TaskRecord[]> {
    if (this.pending.size > 0) await this.flush();
    const rows = await this.db.selectFrom('bg_tasks').selectAll().where('state', '=', 'queued').orderBy('submitted_ms').orderBy('id').execute();
    return rows.map(fromRow);
  }

  async prune(keep: number): Promise<void> {
    // SQLite: one prepared delete of every finished task outside the newest `keep`
    const stmt = preparedOf(this.root, PRUNE_FINISHED);
    if (stmt) {
      if (keep >= 1) stmt.run(keep - 1);
      else preparedOf(this.root, 'delete from bg_tasks where finished_ms is not null')?.run();
      return;
    }
    const edge = await this.db
      .selectFrom('bg_tasks')
      .select(['finished_ms', 'id'])
      .where('finished_ms', 'is not', null)
      .orderBy('finished_ms', 'desc')
      .orderBy('id', 'desc')
      .offset(keep - 1)
      .limit(1)
      .executeTakeFirst();
    if (!edge || edge.finished_ms === null) return;
    const ms = edge.finished_ms;
    await this.db
      .deleteFrom('bg_tasks')
      .where('finished_ms', 'is not', null)
      .where((eb) => eb.or([eb('finished_ms', '<', ms), eb.and([eb('finished_ms', '=', ms), eb('id', '<', edge.id)])]))
      .execute();
  }
}
