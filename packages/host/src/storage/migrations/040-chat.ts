import { sql } from 'kysely';
import type { Db } from '../database';

/** Chat conversations and their messages, per owner (models domain). */
export async function up(db: Db): Promise<void> {
  await sql`create table chat_conversations (
    id text primary key,
    owner text not null,
    title text not null,
    backend text,
    model text,
    created_at text not null,
    updated_at text not null
  )`.execute(db);
  await sql`create index chat_conversations_owner_updated on chat_conversations (owner, updated_at desc, id desc)`.execute(db);
  await sql`create table chat_messages (
    conversation_id text not null references chat_conversations(id) on delete cascade,
    seq integer not null,
    role text not null,
    text text not null,
    message text not null,
    created_at text not null,
    primary key (conversation_id, seq)
  )`.execute(db);
}
