import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { Kysely, PostgresAdapter, PostgresDialect, SqliteDialect, sql } from 'kysely';
import type pg from 'pg';
import { BACKSTOP_PAGES, type Checkpointer, startCheckpointer } from './checkpointer';
import { PostgresDdlPlugin } from './postgres-ddl';

/**
 * The database handle: better-sqlite3 (WAL) behind Kysely by default, or PostgreSQL (node-postgres
 * pool) behind Kysely for a shared deployment; one set of numbered migrations for both.
 */

export type Db = Kysely<any>;

export type DialectName = 'sqlite' | 'postgres';

export interface OpenedDatabase {
  db: Db;
  dialect: DialectName;
  /** The better-sqlite3 handle (SQLite only). */
  raw?: Database.Database;
  close(): Promise<void>;
}

export interface OpenedSqlite extends OpenedDatabase {
  raw: Database.Database;
}

const RAW = new WeakMap<Db, Database.Database>();
/** Which engine a handle (or a transaction of it) talks to; repositories stay dialect-neutral, a few hot paths ask. */
export function dialectOf(db: Db): DialectName {
  return db.getExecutor().adapter instanceof PostgresAdapter ? 'postgres' : 'sqlite';
}

/** The engine's version string (`sqlite_version()` or PostgreSQL's `server_version`). */
export async function engineVersion(db: Db): Promise<string | undefined> {
  const query = dialectOf(db) === 'postgres' ? sql<{ v: string }>`select current_setting('server_version') as v` : sql<{ v: string }>`select sqlite_version() as v`;
  return (await query.execute(db)).rows[0]?.v;
}

/**
 * The better-sqlite3 handle behind a database, for hot paths that run a few prepared statements
 * synchronously. Use it only while `inTransaction` is false (an async transaction of Kysely may be
 * open on the same connection), and fall back to Kysely otherwise.
 */
export function rawOf(db: Db): Database.Database | undefined {
  return RAW.get(db);
}

const STATEMENTS = new WeakMap<Database.Database, Map<string, Database.Statement>>();

/**
 * A prepared statement of the SQLite handle behind `db`, prepared once and reused (hot paths
 * only). Undefined on another dialect, or while a Kysely transaction is open on the connection:
 * the caller then takes its Kysely path.
 */
export function preparedOf(db: Db, text: string): Database.Statement | undefined {
  const raw = RAW.get(db);
  if (!raw || raw.inTransaction) return undefined;
  return statement(raw, text);
}

/** A cached prepared statement of a raw handle (inside a synchronous raw transaction). */
export function statement(raw: Database.Database, text: string): Database.Statement {
  let cache = STATEMENTS.get(raw);
  if (!cache) {
    cache = new Map();
    STATEMENTS.set(raw, cache);
  }
  let stmt = cache.get(text);
  if (!stmt) {
    stmt = raw.prepare(text);
    cache.set(text, stmt);
  }
  return stmt;
}

/** `checkpointThread: false` checkpoints on the connection itself, every 8,000 pages (comparisons only). */
export function openDatabase(home: string, mode: 'file' | 'memory' = 'file', sync: 'normal' | 'full' = 'normal', options: { checkpointThread?: boolean } = {}): OpenedSqlite {
  let raw: Database.Database;
  let checkpointer: Checkpointer | undefined;
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
    // NORMAL in WAL mode: every commit survives a process crash (SIGKILL), and the last commits
    // before a power loss may be lost; FULL fsyncs the log on every commit (survives a power loss).
    raw.pragma(sync === 'full' ? 'synchronous = FULL' : 'synchronous = NORMAL');
    // Checkpoints run on a worker thread (checkpointer.ts), the automatic one being only the
    // backstop: each checkpoint fsyncs, and inline ones were the p99 of commits.
    const threaded = options.checkpointThread !== false;
    raw.pragma(`wal_autocheckpoint = ${threaded ? BACKSTOP_PAGES : 8000}`);
    if (threaded) checkpointer = startCheckpointer(file);
  }
  raw.pragma('foreign_keys = ON');
  raw.pragma('busy_timeout = 5000');
  const db = new Kysely({ dialect: new SqliteDialect({ database: raw }) });
  RAW.set(db, raw);
  return {
    db,
    dialect: 'sqlite',
    raw,
    close: async () => {
      await checkpointer?.stop();
      await db.destroy();
    },
  };
}

/** node-postgres, loaded only for a PostgreSQL database (a SQLite host never reads it). */
export function loadPg(): typeof pg {
  return createRequire(import.meta.url)('pg') as typeof pg;
}

/** 64-bit integers (counts, millisecond instants) are read as numbers, as SQLite returns them. */
function pgTypes(driver: typeof pg) {
  return {
    getTypeParser(oid: number, format?: 'text' | 'binary') {
      if (oid === driver.types.builtins.INT8 || oid === driver.types.builtins.NUMERIC) return (v: string) => Number(v);
      return driver.types.getTypeParser(oid, format);
    },
  };
}

/** A pool on a PostgreSQL database (`postgres://…`); connections are opened on first use. */
export function openPostgres(url: string, poolSize = 10): OpenedDatabase {
  const driver = loadPg();
  const pool = new driver.Pool({ connectionString: url, max: poolSize, types: pgTypes(driver) as pg.CustomTypesConfig });
  // An idle connection dropped by the server must not crash the host; the pool replaces it.
  pool.on('error', () => {});
  const db = new Kysely({ dialect: new PostgresDialect({ pool }) });
  return { db, dialect: 'postgres', close: () => db.destroy() };
}

/** The configured database: PostgreSQL when a URL is given, otherwise the SQLite file under home. */
export function openConfigured(config: { home: string; database: 'file' | 'memory'; databaseUrl?: string; dbSync?: 'normal' | 'full' }): OpenedDatabase {
  return config.databaseUrl ? openPostgres(config.databaseUrl) : openDatabase(config.home, config.database, config.dbSync);
}

const MIGRATIONS_DIR = join(import.meta.dirname, 'migrations');

/** Runs every not-yet-applied migration file (`NNN-name.ts`) in name order, each in a transaction. */
export async function migrate(db: Db, dir = MIGRATIONS_DIR): Promise<string[]> {
  // Several hosts may start at once on one PostgreSQL database: one migrates, the others wait.
  if (dialectOf(db) === 'postgres')
    return db.connection().execute(async (conn) => {
      await sql`select pg_advisory_lock(${MIGRATION_LOCK})`.execute(conn);
      try {
        return await applyPending(conn, dir, true);
      } finally {
        await sql`select pg_advisory_unlock(${MIGRATION_LOCK})`.execute(conn);
      }
    });
  return applyPending(db, dir, false);
}

/** The advisory-lock key held while migrations run on PostgreSQL. */
const MIGRATION_LOCK = 7_001_001;

/** The migration files not yet recorded in `schema_migrations`, in name order. */
export async function pendingMigrations(db: Db, dir = MIGRATIONS_DIR): Promise<string[]> {
  const exists = await tableExists(db, 'schema_migrations');
  const done = exists ? new Set((await db.selectFrom('schema_migrations').select('name').execute()).map((r) => r.name as string)) : new Set<string>();
  return migrationFiles(dir)
    .map((f) => f.replace(/\.(ts|js|mjs)$/, ''))
    .filter((n) => !done.has(n));
}

async function tableExists(db: Db, name: string): Promise<boolean> {
  const q =
    dialectOf(db) === 'postgres'
      ? sql<{ n: number }>`select count(*) as n from information_schema.tables where table_schema = current_schema() and table_name = ${name}`
      : sql<{ n: number }>`select count(*) as n from sqlite_master where type = 'table' and name = ${name}`;
  const { rows } = await q.execute(db);
  return Number(rows[0]?.n ?? 0) > 0;
}

function migrationFiles(dir: string): string[] {
  return readdirSync(dir)
    .filter((f) => /^\d{3}-.*\.(ts|js|mjs)$/.test(f) && !f.endsWith('.d.ts') && !f.includes('.test.'))
    .sort();
}

async function applyPending(db: Db, dir: string, postgres: boolean): Promise<string[]> {
  await sql`create table if not exists schema_migrations (name text primary key, applied_at text not null)`.execute(db);
  const done = new Set((await db.selectFrom('schema_migrations').select('name').execute()).map((r) => r.name as string));
  const files = migrationFiles(dir);
  const applied: string[] = [];
  let compact = false;
  for (const file of files) {
    const name = file.replace(/\.(ts|js|mjs)$/, '');
    if (done.has(name)) continue;
    const mod = (await import(pathToFileURL(join(dir, file)).href)) as { up: (db: Db) => Promise<void | { compact?: boolean }> };
    await db.transaction().execute(async (trx) => {
      // One source for both engines: the DDL is written once and adapted for PostgreSQL.
      const result = await mod.up(postgres ? trx.withPlugin(new PostgresDdlPlugin()) : trx);
      if (result?.compact) compact = true;
      await trx.insertInto('schema_migrations').values({ name, applied_at: new Date().toISOString() }).execute();
    });
    applied.push(name);
  }
  // a migration that rewrote values which must not stay on disk (old clear copies): SQLite keeps
  // the old bytes in freed pages and the WAL until the file is rewritten and the log truncated
  if (compact && !postgres) {
    await sql`vacuum`.execute(db);
    await sql`pragma wal_checkpoint(truncate)`.execute(db);
  }
  return applied;
}
