import { sql } from 'kysely';
import type { Db } from '../database';

/** Installed plugins (host-wide, not owner-scoped): one row per plugin id, the active version. */
export async function up(db: Db): Promise<void> {
  await sql`create table plugins (
    id text primary key,
    name text not null,
    version text not null,
    description text not null default '',
    enabled integer not null default 1,
    manifest text not null,
    root text not null,
    bundled integer not null default 0,
    installed_at text not null,
    updated_at text not null
  )`.execute(db);
}
