import { sql } from 'kysely';
import type { Db } from '../database';

/**
 * `workflows.mcp`: whether the workflow is served over MCP and under which permission mode
 * (`{"enabled": true, "permissionMode": "ask"}` as JSON; null: not served). A setting of the
 * workflow, not of a version: it takes effect at once and never makes draft changes.
 */
export async function up(db: Db): Promise<void> {
  await sql`alter table workflows add column mcp text`.execute(db);
}
