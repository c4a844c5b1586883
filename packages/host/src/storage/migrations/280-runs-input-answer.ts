import { sql } from 'kysely';
import type { Db } from '../database';

/**
 * `runs.input_answer`: an input step's answer (`{stepId, values, how}`, JSON) committed with the
 * gate's answer and cleared by the step's own commit (its start and end), so a run interrupted
 * between the two takes that answer on resume instead of asking again (docs/reliability.md).
 */
export async function up(db: Db): Promise<void> {
  await sql`alter table runs add column input_answer text`.execute(db);
}
