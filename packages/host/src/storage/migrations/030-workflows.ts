import { sql } from 'kysely';
import type { Db } from '../database';

/**
 * Workflow definitions (the editable draft, owner-scoped, optimistic `revision`) and their
 * published versions (immutable snapshots; `published_version` points at the active one).
 */
export async function up(db: Db): Promise<void> {
  await sql`create table workflows (
    id text primary key,
    owner text not null,
    name text not null,
    description text not null,
    input_schema text not null,
    plan text not null,
    graph text,
    layout text,
    content_hash text not null,
    revision integer not null,
    published_version integer,
    created_at text not null,
    updated_at text not null
  )`.execute(db);
  await sql`create index workflows_owner_updated on workflows (owner, updated_at desc, id)`.execute(db);
  await sql`create table workflow_versions (
    workflow_id text not null references workflows(id) on delete cascade,
    version integer not null,
    revision integer not null,
    name text not null,
    description text not null,
    input_schema text not null,
    plan text not null,
    graph text,
    layout text,
    content_hash text not null,
    published_at text not null,
    primary key (workflow_id, version)
  )`.execute(db);
}
