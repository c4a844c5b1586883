import { sql } from 'kysely';
import type { Db } from '../database';

/**
 * Workflow schedules. `next_run_ms` is the next fire instant (null when none is left);
 * `claim_ms` is set, in the same write that advances `next_run_ms`, while an occurrence is
 * being submitted: a row found with a claim after a restart was caught by a crash and is
 * reported, never replayed. `sandboxed` records the plugin isolation at creation.
 */
export async function up(db: Db): Promise<void> {
  await sql`create table schedules (
    id text primary key,
    owner text not null,
    workflow_id text not null,
    recurrence text not null,
    permission_mode text not null,
    inputs text not null,
    created_at text not null,
    anchor_ms integer not null,
    next_run_ms integer,
    expires_ms integer,
    trigger_count integer not null default 0,
    missed_fires integer not null default 0,
    last_error text,
    last_task_id text,
    state text not null,
    paused_reason text,
    sandboxed integer not null,
    claim_ms integer,
    claimed_at_ms integer,
    updated_at text not null
  )`.execute(db);
  await sql`create index schedules_owner_created on schedules (owner, created_at desc, id)`.execute(db);
  await sql`create index schedules_due on schedules (state, next_run_ms)`.execute(db);
  await sql`create index schedules_workflow on schedules (workflow_id)`.execute(db);
}
