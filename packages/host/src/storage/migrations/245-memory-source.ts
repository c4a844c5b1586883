import { sql } from 'kysely';
import type { Db } from '../database';

/**
 * Where a memory came from, for the Memory screen: the run or chat conversation whose
 * `memory_remember` call stored it (both null for memories stored before this migration).
 */
export async function up(db: Db): Promise<void> {
  await sql`alter table memories add column run_id text`.execute(db);
  await sql`alter table memories add column conversation_id text`.execute(db);
}
