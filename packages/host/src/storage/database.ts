import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { Kysely, SqliteDialect, sql } from 'kysely';

/** The database handle: better-sqlite3 (WAL) behind Kysely, and numbered migrations. */

// biome-ignore lint/suspicious/noExplicitAny: repositories narrow with withTables<>()
export type Db = Kysely<any>;

export interface OpenedDatabase {
  db: Db;
  raw: Database.Database;
  close(): Promise<void>;
}

const RAW = new WeakMap<Db, Database.Database>();

/**
 * The better-sqlite3 handle behind a database, for hot paths that run a few prepared statements
 * synchronously. Use it only while `inTransaction` is false (an async transaction of Kysely may be
 * open on the same connection), and fall back to Kysely otherwise.
 */
export function rawOf(db: Db): Database.Database | undefined {
  return RAW.get(db);
}

export function openDatabase(home: string, mode: 'file' | 'memory' = 'file'): OpenedDatabase {
  let raw: Database.Database;
  if (mode === 'memory') raw = new Database(':memory:');
  else {
    // FENGYU_HOME holds the token, keys and the database: only its owner may enter it.
    mkdirSync(home, { recursive: true, mode: 0o700 });
    chmodSync(home, 0o700);
    const file = join(home, 'fengyu.db');
    closeSync(openSync(file, 'a', 0o600));
    for (const f of [file, `${file}-wal`, `${file}-shm`]) if (existsSync(f)) chmodSync(f, 0o600);
    raw = new Database(file);
    raw.pragma('journal_mode = WAL');
    // NORMAL in WAL mode: every commit survives a process crash (SIGKILL); see docs/decisions/core.md.
    raw.pragma('synchronous = NORMAL');
    // Checkpoint less often: each checkpoint fsyncs, and frequent ones were the p99 of a step.
    raw.pragma('wal_autocheckpoint = 8000');
  }
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');
  const db = new Kysely({ dialect: new SqliteDialect({ database: raw }) });
  RAW.set(db, raw);
  return { db, raw, close: () => db.destroy() };
}

const MIGRATIONS_DIR = join(import.meta.dirname, 'migrations');

/** Runs every not-yet-applied migration file (`NNN-name.ts`) in name order, each in a transaction. */
export async function migrate(db: Db, dir = MIGRATIONS_DIR): Promise<string[]> {
  await sql`create table if not exists schema_migrations (name text primary key, applied_at text not null)`.execute(db);
  const done = new Set((await db.selectFrom('schema_migrations').select('name').execute()).map((r) => r.name as string));
  const files = readdirSync(dir)
    .filter((f) => /^\d{3}-.*\.(ts|js)$/.test(f) && !f.endsWith('.d.ts') && !f.includes('.test.'))
    .sort();
  const applied: string[] = [];
  for (const file of files) {
    const name = file.replace(/\.(ts|js)$/, '');
    if (done.has(name)) continue;
    const mod = (await import(pathToFileURL(join(dir, file)).href)) as { up: (db: Db) => Promise<void> };
    await db.transaction().execute(async (trx) => {
      await mod.up(trx);
      await trx.insertInto('schema_migrations').values({ name, applied_at: new Date().toISOString() }).execute();
    });
    applied.push(name);
  }
  return applied;
}
