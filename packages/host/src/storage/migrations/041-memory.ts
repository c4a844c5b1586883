import { sql } from 'kysely';
import type { Db } from '../database';

/** Cross-session memory: durable facts per owner (models domain, off by default). */
export async function up(db: Db): Promise<void> {
  await sql`create table memories (
    id text primary key,
    owner text not null,
    content text not null,
    created_at text not null,
    created_ms integer not null
  )`.execute(db);
  await sql`create index memories_owner_created on memories (owner, created_ms desc)`.execute(db);
}
