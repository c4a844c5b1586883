import { sql } from 'kysely';
import type { Db } from '../database';

/**
 * The error-workflow outbox (docs/workflows.md "Failure handling"): one row per failed run of a
 * workflow that names an error workflow, inserted in the transaction that records the run's
 * failure. `task_id` is the error workflow's task, its id chosen with the row: the dispatcher
 * submits the task under that id and never submits a row twice, also across a crash. `state`:
 * `pending` (not yet submitted), `submitted`, `failed` (the error workflow could not be started:
 * `error_code`/`error_message` of that say why). `claimed_ms`: when a dispatcher took the row
 * (several hosts on one database).
 */
export async function up(db: Db): Promise<void> {
  await sql`create table error_outbox (
    failed_run_id text primary key,
    owner text not null,
    error_workflow_id text not null,
    workflow_name text not null,
    task_id text not null,
    error_code text not null,
    error_message text not null,
    failed_step_id text,
    state text not null,
    attempts integer not null,
    claimed_ms integer,
    failure_code text,
    failure_message text,
    created_at text not null,
    settled_at text
  )`.execute(db);
  await sql`create index error_outbox_pending on error_outbox (created_at) where state = 'pending'`.execute(db);
}
