import { sql } from 'kysely';
import type { Db } from '../database';

/** Owners, settings, runs (a projection of the event log), step executions and the log itself. */
export async function up(db: Db): Promise<void> {
  await sql`create table owners (
    id text primary key,
    name text not null,
    token_sha256 text unique,
    created_at text not null
  )`.execute(db);
  await sql`create table settings (
    owner text primary key,
    doc text not null,
    updated_at text not null
  )`.execute(db);
  await sql`create table runs (
    id text primary key,
    owner text not null,
    goal text,
    status text not null,
    plan text,
    config text not null,
    inputs text not null,
    files text,
    gate text,
    summary text,
    error text,
    result text,
    parent_run_id text,
    origin text not null,
    sandbox text not null,
    workflow_id text,
    workflow_version integer,
    last_seq integer not null default 0,
    created_at text not null,
    updated_at text not null,
    finished_at text
  )`.execute(db);
  await sql`create index runs_owner_created on runs (owner, created_at desc, id desc)`.execute(db);
  await sql`create index runs_status on runs (status)`.execute(db);
  await sql`create table step_executions (
    run_id text not null references runs(id) on delete cascade,
    step_id text not null,
    status text not null,
    attempts integer not null default 0,
    result text,
    error text,
    started_at text,
    finished_at text,
    duration_ms integer,
    fingerprint text,
    reused integer not null default 0,
    primary key (run_id, step_id)
  )`.execute(db);
  await sql`create table run_events (
    run_id text not null references runs(id) on delete cascade,
    seq integer not null,
    type text not null,
    data text not null,
    ts text not null,
    primary key (run_id, seq)
  )`.execute(db);
}
