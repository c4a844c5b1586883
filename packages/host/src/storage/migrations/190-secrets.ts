import { sql } from 'kysely';
import type { Db } from '../database';

/**
 * The secrets vault: one sealed value per (owner, name). `kind` is `user` for the secrets an owner
 * names (`{{secrets.NAME}}`) and `internal` for values other domains keep here (backend API keys,
 * MCP header and env values), whose names hold a `:` and so never clash with a user's. `value` is
 * AES-256-GCM ciphertext; `key_id` a digest naming the key that sealed it (never the key itself).
 */
export async function up(db: Db): Promise<void> {
  await sql`create table secrets (
    owner text not null,
    name text not null,
    kind text not null,
    value text not null,
    key_id text not null,
    created_at text not null,
    updated_at text not null,
    primary key (owner, name)
  )`.execute(db);
}
