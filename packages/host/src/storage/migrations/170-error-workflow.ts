import { sql } from 'kysely';
import type { Db } from '../database';

/**
 * `workflows.error_workflow_id`: the workflow submitted as a background task when a run of this
 * one fails (docs/workflows.md "Failure handling"); null: none. A setting of the workflow, not of a
 * version (like `mcp`): it takes effect at once and never makes draft changes.
 */
export async function up(db: Db): Promise<void> {
  await sql`alter table workflows add column error_workflow_id text`.execute(db);
}
