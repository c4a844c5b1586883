import { sql } from 'kysely';
import type { Db } from '../database';

/**
 * Workflow webhooks: triggers (owner-scoped; the secret kept only as its SHA-256 digest),
 * their delivery audit (no body, secret or event id), and event-id claims (the digest of an
 * event id, unique per trigger: the at-most-once record written before a task is submitted).
 * Triggers outlive their workflow as `disabled` rows, so no foreign key to `workflows`.
 */
export async function up(db: Db): Promise<void> {
  await sql`create table webhook_triggers (
    id text primary key,
    owner text not null,
    workflow_id text not null,
    name text not null,
    defaults text not null,
    permission_mode text not null,
    secret_sha256 text not null,
    state text not null,
    created_sandboxed integer not null,
    created_at text not null,
    last_delivery_at text
  )`.execute(db);
  await sql`create index webhook_triggers_workflow on webhook_triggers (owner, workflow_id, created_at)`.execute(db);
  await sql`create table webhook_deliveries (
    seq integer primary key autoincrement,
    id text not null unique,
    trigger_id text not null references webhook_triggers(id) on delete cascade,
    state text not null,
    accepted_at text not null,
    accepted_ms integer not null,
    completed_at text,
    duration_ms integer,
    task_id text,
    idempotency_key_supplied integer not null,
    error_code text,
    error_message text
  )`.execute(db);
  await sql`create index webhook_deliveries_trigger on webhook_deliveries (trigger_id, seq)`.execute(db);
  await sql`create index webhook_deliveries_task on webhook_deliveries (task_id) where task_id is not null`.execute(db);
  await sql`create index webhook_deliveries_open on webhook_deliveries (state) where state in ('CLAIMED', 'QUEUED', 'SUBMITTED')`.execute(db);
  await sql`create table webhook_event_claims (
    trigger_id text not null references webhook_triggers(id) on delete cascade,
    event_sha256 text not null,
    delivery_id text not null,
    task_id text,
    claimed_ms integer not null,
    primary key (trigger_id, event_sha256)
  )`.execute(db);
  await sql`create index webhook_event_claims_age on webhook_event_claims (claimed_ms)`.execute(db);
}
