import { sql } from 'kysely';
import { type Db, dialectOf } from '../database';

/**
 * On the host's own SQLite file, the two secondary indexes of `runs` that every run's commits
 * write, made cheaper to write; they serve the same reads.
 * - `runs_status` (every status) becomes `runs_live`: only the live statuses, the one read that
 *   filters by status alone (start-up and a stop interrupt the live runs). An owner's listing
 *   filtered by status reads `runs_owner_created` with or without it (the planner takes that one
 *   for its order). A run's end no longer adds a terminal status's entry, and the index stays as
 *   small as the live runs. The condition is written as comparisons, not an IN list of constants
 *   (SQLite builds a temporary B-tree of such a list each time a statement evaluates it: see
 *   migration 120).
 * - `runs_owner_created` on `(owner, created_at desc, id desc)` becomes ascending: a new run's
 *   entry went to the left edge of the owner's range, where SQLite rebalances up to three pages
 *   almost every insert; now to the right edge. The listing, newest first, reads it backwards.
 * A shared PostgreSQL database keeps both as they are.
 */
export async function up(db: Db): Promise<void> {
  if (dialectOf(db) === 'postgres') return;
  await sql`drop index if exists runs_status`.execute(db);
  await sql`create index runs_live on runs (status) where (status = 'planning' or status = 'awaiting_plan_approval' or status = 'running' or status = 'awaiting_step_approval')`.execute(db);
  await sql`drop index if exists runs_owner_created`.execute(db);
  await sql`create index runs_owner_created on runs (owner, created_at, id)`.execute(db);
}
