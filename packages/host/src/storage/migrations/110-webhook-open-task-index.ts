import { sql } from 'kysely';
import { type Db, dialectOf } from '../database';

/**
 * On the host's own SQLite file, `webhook_deliveries_task` (every audit row with a task, by task
 * id) becomes `webhook_deliveries_open_task`: the same key over the open rows only. Its readers
 * look for the open row of a task (a task's end, a queued task's start); task ids are random, so
 * the full index took each delivery's insert and the audit cap's delete of an old row on two random
 * leaves of a 1,000-row-per-trigger index, ≈ 0.9 WAL page per delivery. Open rows are the
 * deliveries whose task has not ended: a few pages, written together. The readers' conditions name
 * the open states exactly as below (SQLite uses a partial index only for a query whose WHERE
 * contains its condition). A shared PostgreSQL database keeps the full index.
 */
export async function up(db: Db): Promise<void> {
  if (dialectOf(db) === 'postgres') return;
  await sql`create index webhook_deliveries_open_task on webhook_deliveries (task_id) where state in ('CLAIMED', 'QUEUED', 'SUBMITTED')`.execute(db);
  await sql`drop index if exists webhook_deliveries_task`.execute(db);
}
