import { sql } from 'kysely';
import type { Db } from '../database';

/**
 * Background tasks: one row per task, owner-scoped. Queued and running rows found at start are
 * marked interrupted (never re-run); only the latest finished tasks are kept.
 */
export async function up(db: Db): Promise<void> {
  await sql`create table bg_tasks (
    id text primary key,
    owner text not null,
    kind text not null,
    priority text not null,
    state text not null,
    workflow_id text not null,
    workflow_version integer not null,
    run_id text,
    schedule_id text,
    trigger_id text,
    inputs text not null,
    permission_mode text not null,
    submitted_ms integer not null,
    started_ms integer,
    finished_ms integer,
    output_text text not null default '',
    output_truncated integer not null default 0,
    error_code text,
    error_message text
  )`.execute(db);
  await sql`create index bg_tasks_owner_submitted on bg_tasks (owner, submitted_ms desc, id)`.execute(db);
  await sql`create index bg_tasks_state on bg_tasks (state)`.execute(db);
  await sql`create index bg_tasks_finished on bg_tasks (finished_ms desc) where finished_ms is not null`.execute(db);
}
