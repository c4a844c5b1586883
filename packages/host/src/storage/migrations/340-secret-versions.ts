import { sql } from 'kysely';
import type { Db } from '../database';

/**
 * `secret_versions`: one counter per owner and vault scope whose values every host of a shared
 * PostgreSQL database keeps opened in memory (`backend` API keys, `mcp` header and env values).
 * A write of such a value bumps its scope's counter in the same transaction; before a model call
 * or an MCP connection a host compares the counter with the one it last read and reads the scope's
 * rows again only when it moved (`secrets/vault.ts`). SQLite has one host per file: the table
 * stays empty there.
 */
export async function up(db: Db): Promise<void> {
  await sql`create table secret_versions (
    owner text not null,
    scope text not null,
    version integer not null,
    primary key (owner, scope)
  )`.execute(db);
}
