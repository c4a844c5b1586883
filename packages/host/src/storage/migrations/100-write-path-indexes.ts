import { sql } from 'kysely';
import { type Db, dialectOf } from '../database';

/**
 * On the host's own SQLite file, two indexes that every webhook delivery and every background
 * task paid for on each write, and that no query on a hot path reads:
 * - `webhook_deliveries_open` (the open audit states): read only at start (claims caught by a stop
 *   become INTERRUPTED, open rows are followed again) and when a listing reconciles one trigger's
 *   open rows (found by the trigger's own index); the audit keeps at most 1,000 rows per trigger.
 *   A delivery's insert added to it and its end removed from it;
 * - `bg_tasks_state`: read only at start (queued and running tasks are interrupted) and by an
 *   owner's listing filtered by state (which reads the owner's index first); the table keeps the
 *   newest 100 finished tasks and the live ones. A task's submission, start and end each rewrote it.
 * A shared PostgreSQL database keeps both: its hosts poll the live tasks by state.
 */
export async function up(db: Db): Promise<void> {
  if (dialectOf(db) === 'postgres') return;
  await sql`drop index if exists webhook_deliveries_open`.execute(db);
  await sql`drop index if exists bg_tasks_state`.execute(db);
}
