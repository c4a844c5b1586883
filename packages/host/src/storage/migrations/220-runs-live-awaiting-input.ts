import { sql } from 'kysely';
import { type Db, dialectOf } from '../database';

/**
 * Input steps add the live status `awaiting_input` (a run waiting for a person's values). On the
 * host's own SQLite file the partial index `runs_live` (migration 130) is made again with it, in
 * the same form as the live-status condition the repository states (comparisons with constants,
 * in `LIVE_STATUSES` order), so the start-up and stop reads of the live runs keep using it and find
 * the runs waiting for input. A shared PostgreSQL database has the full `runs_status` index.
 */
export async function up(db: Db): Promise<void> {
  if (dialectOf(db) === 'postgres') return;
  await sql`drop index if exists runs_live`.execute(db);
  await sql`create index runs_live on runs (status) where (status = 'planning' or status = 'awaiting_plan_approval' or status = 'running' or status = 'awaiting_step_approval' or status = 'awaiting_input')`.execute(db);
}
