import { sql } from 'kysely';
import { type Db, dialectOf } from '../database';

/**
 * On the host's own SQLite file, `webhook_deliveries_open_task` (migration 110) is made again with
 * its open-state condition written as three comparisons instead of an IN list of three constants.
 * SQLite evaluates `state in ('CLAIMED', 'QUEUED', 'SUBMITTED')` by building a temporary B-tree of
 * the three values each time a statement runs (it does so for lists of more than two constants),
 * and a partial index's condition is evaluated on every insert, update and delete of the table: the
 * audit's insert, a task's end and the cap's delete each built one. The index covers the same rows.
 */
export async function up(db: Db): Promise<void> {
  if (dialectOf(db) === 'postgres') return;
  await sql`drop index if exists webhook_deliveries_open_task`.execute(db);
  await sql`create index webhook_deliveries_open_task on webhook_deliveries (task_id) where (state = 'CLAIMED' or state = 'QUEUED' or state = 'SUBMITTED')`.execute(db);
}
