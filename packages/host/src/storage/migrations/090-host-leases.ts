import { sql } from 'kysely';
import type { Db } from '../database';

/**
 * Host identity and leases for a shared database. Each host process writes one `hosts` row and
 * renews `expires_ms` while it lives; a live run or task names the host executing it
 * (`host_id`). Only the live work of a host whose lease expired is interrupted, once: `swept_ms`
 * records that its sweep finished. `bg_tasks.released_ms` records the hand-off of a queued task
 * to the job engine (its job id is the task id); `kill_requested` asks the executing host to kill it.
 * On a single-host database the columns stay empty.
 */
export async function up(db: Db): Promise<void> {
  await sql`create table hosts (
    id text primary key,
    started_ms integer not null,
    heartbeat_ms integer not null,
    expires_ms integer not null,
    stopped_ms integer,
    swept_ms integer
  )`.execute(db);
  await sql`create index hosts_expires on hosts (expires_ms) where swept_ms is null and stopped_ms is null`.execute(db);
  await sql`alter table runs add column host_id text`.execute(db);
  await sql`alter table bg_tasks add column host_id text`.execute(db);
  await sql`alter table bg_tasks add column released_ms integer`.execute(db);
  await sql`alter table bg_tasks add column kill_requested integer not null default 0`.execute(db);
  await sql`create index bg_tasks_host on bg_tasks (host_id) where host_id is not null`.execute(db);
}
