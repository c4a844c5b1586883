import { sql } from 'kysely';
import type { Db } from '../database';

/** Which plugins' hooks the user trusts (permissions domain). Keyed by plugin id, host-wide. */
export async function up(db: Db): Promise<void> {
  await sql`create table plugin_hook_trust (
    plugin_id text primary key,
    trusted_by text not null,
    trusted_at text not null
  )`.execute(db);
}
