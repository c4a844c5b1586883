import { sql } from 'kysely';
import type { Db } from '../database';

/**
 * Files carried by background tasks and kept by schedules: `bg_tasks.files` and `schedules.files`
 * hold the run's `files` entries as JSON (`[{"name": "workbook", "refs": ["<FileRef id>"]}]`;
 * null: none), so a queued task re-queued after a restart, and every fire of a schedule, are
 * granted the same uploads.
 */
export async function up(db: Db): Promise<void> {
  await sql`alter table bg_tasks add column files text`.execute(db);
  await sql`alter table schedules add column files text`.execute(db);
}
