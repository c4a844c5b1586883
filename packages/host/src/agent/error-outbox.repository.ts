import type Database from 'better-sqlite3';
import { type Kysely, sql } from 'kysely';
import type { Trx } from '../events/event-log';
import { type Db, statement } from '../storage/database';
import { newRunId } from './run-id';

/**
 * The error-workflow outbox (docs/workflows.md "Failure handling"). A run's failure is recorded
 * with, in the same transaction, one outbox row when the run is of a workflow that names an error
 * workflow (of the same owner) and is not itself a run of an error workflow: a host that dies
 * leaves both or neither. The row holds what the `failedRun` document needs that the run's row
 * does not (the failure's code, message and step, the workflow's name then) and the id of the
 * error workflow's task, chosen now: the dispatcher submits under that id, so a crash between the
 * submission and the row's settling never submits twice.
 */

/** The origin of a run started as an error workflow (its task kind): such a run triggers none. */
export const ERROR_WORKFLOW_ORIGIN = 'workflow-error';

/** What a run's failure writes to the outbox (when its workflow names an error workflow). */
export interface RunFailure {
  code: string;
  message: string;
  stepId?: string;
  /** When it failed (ISO-8601): the row's time, and the time part of its task's id. */
  at: string;
}

export type OutboxState = 'pending' | 'submitted' | 'failed';

export interface OutboxRow {
  failed_run_id: string;
  owner: string;
  error_workflow_id: string;
  workflow_name: string;
  task_id: string;
  error_code: string;
  error_message: string;
  failed_step_id: string | null;
  state: OutboxState;
  attempts: number;
  claimed_ms: number | null;
  failure_code: string | null;
  failure_message: string | null;
  created_at: string;
  settled_at: string | null;
}

type Tables = { error_outbox: OutboxRow };

/** The insert, with the task's id, the failure's code, message and step, the time, then the run's id. */
const INSERT = `insert into error_outbox (failed_run_id, owner, error_workflow_id, workflow_name, task_id, error_code, error_message, failed_step_id, state, attempts, created_at)
select r.id, r.owner, w.error_workflow_id, w.name, ?, ?, ?, ?, 'pending', 0, ?
from runs r join workflows w on w.id = r.workflow_id and w.owner = r.owner
where r.id = ? and w.error_workflow_id is not null and r.origin <> '${ERROR_WORKFLOW_ORIGIN}'
on conflict (failed_run_id) do nothing`;

/** The insert's values: a run fails once (a resumed run failing again keeps its first row). */
function values(runId: string, f: RunFailure): unknown[] {
  return [newRunId(Date.parse(f.at)), f.code, f.message.slice(0, 8000), f.stepId ?? null, f.at, runId];
}

/** The outbox row of a failing run, inside the synchronous SQLite transaction that records its failure. */
export function insertOutboxRaw(raw: Database.Database, runId: string, f: RunFailure): void {
  statement(raw, INSERT).run(...values(runId, f));
}

/** The same inside a Kysely transaction (PostgreSQL, or while one holds the SQLite connection): the same statement, bound. */
export async function insertOutbox(trx: Trx, runId: string, f: RunFailure): Promise<void> {
  const parts = INSERT.split('?');
  const vals = values(runId, f);
  await sql.join([sql.raw(parts[0] as string), ...vals.map((v, i) => sql`${v}${sql.raw(parts[i + 1] as string)}`)], sql.raw('')).execute(trx);
}

export class ErrorOutboxRepository {
  private readonly db: Kysely<Tables>;

  constructor(db: Db) {
    this.db = db.withTables<Tables>();
  }

  /** Pending rows, oldest first. */
  async pending(limit: number): Promise<OutboxRow[]> {
    return this.db.selectFrom('error_outbox').selectAll().where('state', '=', 'pending').orderBy('created_at').limit(limit).execute();
  }

  /**
   * Takes a pending row for this dispatcher: false when it is settled or another dispatcher took
   * it since `staleBeforeMs` (several hosts on one database; a taker that died lets it go then).
   */
  async claim(runId: string, nowMs: number, staleBeforeMs: number): Promise<boolean> {
    const r = await this.db
      .updateTable('error_outbox')
      .set((eb) => ({ claimed_ms: nowMs, attempts: eb('attempts', '+', 1) }))
      .where('failed_run_id', '=', runId)
      .where('state', '=', 'pending')
      .where((eb) => eb.or([eb('claimed_ms', 'is', null), eb('claimed_ms', '<', staleBeforeMs)]))
      .executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** A claimed row let go (its submission is to be tried again later). */
  async release(runId: string): Promise<void> {
    await this.db.updateTable('error_outbox').set({ claimed_ms: null }).where('failed_run_id', '=', runId).where('state', '=', 'pending').execute();
  }

  async settle(runId: string, state: Exclude<OutboxState, 'pending'>, at: string, failure?: { code: string; message: string }): Promise<void> {
    await this.db
      .updateTable('error_outbox')
      .set({ state, settled_at: at, claimed_ms: null, failure_code: failure?.code ?? null, failure_message: failure?.message.slice(0, 8000) ?? null })
      .where('failed_run_id', '=', runId)
      .execute();
  }

  async forRun(runId: string): Promise<OutboxRow | undefined> {
    return this.db.selectFrom('error_outbox').selectAll().where('failed_run_id', '=', runId).executeTakeFirst();
  }
}
