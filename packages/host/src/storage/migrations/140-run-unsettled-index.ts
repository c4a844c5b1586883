import { sql } from 'kysely';
import type { Db } from '../database';

/**
 * `runs_owner_unsettled` on `(owner, status, created_at, id)`, partial: the runs whose status is
 * not `completed`. An owner's listing filtered by statuses that do not include `completed` (the
 * failed, cancelled, interrupted or live runs: few among many) reads just the matching entries,
 * newest first, instead of the owner's whole range of `runs_owner_created`. Completed runs (most
 * runs, and every run written once as completed) never enter it; a longer run enters it while live
 * and leaves it when it completes. The condition is one comparison with a constant, which the
 * listing states word for word so that the planner may use the index.
 */
export async function up(db: Db): Promise<void> {
  await sql`create index if not exists runs_owner_unsettled on runs (owner, status, created_at, id) where status <> 'completed'`.execute(db);
}
