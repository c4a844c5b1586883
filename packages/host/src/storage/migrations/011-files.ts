import { sql } from 'kysely';
import type { Db } from '../database';

/** Uploaded files (FileRefs), owner-scoped; bytes live under $FENGYU_HOME/files/<id>/<name>. */
export async function up(db: Db): Promise<void> {
  await sql`create table files (
    id text primary key,
    owner text not null,
    name text not null,
    size integer not null,
    sha256 text not null,
    path text not null,
    created_at text not null
  )`.execute(db);
  await sql`create index files_owner on files (owner, created_at)`.execute(db);
}
