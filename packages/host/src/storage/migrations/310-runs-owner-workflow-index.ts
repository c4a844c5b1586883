import { sql } from 'kysely';
import type { Db } from '../database';

/**
 * `runs_owner_workflow` on `(owner, workflow_id, created_at, id)`, partial: the runs of a
 * workflow. An owner's listing of one workflow's runs (`GET /api/agent/runs?workflowId=`, the
 * builder's "Recent runs of this flow") reads just that workflow's entries, newest first, instead
 * of the owner's whole range of `runs_owner_created`. A run's owner, workflow and creation time
 * never change, so only a run's insert writes the index (not the commits of its steps); runs
 * started without a workflow never enter it. The listing's `workflow_id = ?` implies the
 * condition, so both engines' planners may use it.
 */
export async function up(db: Db): Promise<void> {
  await sql`create index if not exists runs_owner_workflow on runs (owner, workflow_id, created_at, id) where workflow_id is not null`.execute(db);
}
