import { sql } from 'kysely';
import type { Db } from '../database';

/**
 * The inbox: one row per gate a run opened (plan approval, step approval, input), written in the
 * transaction that records the gate's `*_requested` event, and settled (`answered`, `expired`,
 * `cancelled`) in the transaction that records its end. Pending rows are the owner's inbox,
 * oldest first; `expires_at` survives a restart so expiry still holds.
 */
export async function up(db: Db): Promise<void> {
  await sql`create table inbox_items (
    id text primary key,
    owner text not null,
    run_id text not null,
    kind text not null,
    step_id text,
    title text not null,
    workflow_id text,
    workflow_name text,
    trigger text not null,
    created_at text not null,
    expires_at text,
    body text not null,
    state text not null,
    settled_at text
  )`.execute(db);
  await sql`create index inbox_items_owner_pending on inbox_items (owner, created_at, id) where state = 'pending'`.execute(db);
  await sql`create index inbox_items_expiry on inbox_items (expires_at) where state = 'pending'`.execute(db);
  await sql`create index inbox_items_run on inbox_items (run_id)`.execute(db);
}
