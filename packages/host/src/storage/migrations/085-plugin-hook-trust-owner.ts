import { sql } from 'kysely';
import type { Db } from '../database';

/**
 * Plugin-hook trust per owner, bound to the installed package (`binding`: a digest of the
 * plugin id, its install time and its installed files). Earlier host-wide trust rows carry no
 * binding, so they are dropped: each owner is asked again.
 */
export async function up(db: Db): Promise<void> {
  await sql`create table plugin_hook_trusts (
    owner text not null,
    plugin_id text not null,
    binding text not null,
    trusted_at text not null,
    primary key (owner, plugin_id)
  )`.execute(db);
  await sql`drop table if exists plugin_hook_trust`.execute(db);
}
