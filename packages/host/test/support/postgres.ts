import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { migrate, type OpenedDatabase, openDatabase, openPostgres } from '../../src/storage/database';

/**
 * A throw-away PostgreSQL server for tests: Debian's binaries, a temp data directory, a free
 * loopback port, fsync off. It runs as the `postgres` user when the tests run as root (the server
 * refuses root). One server per test file; each test takes a fresh database from it.
 */

const run = promisify(execFile);

export function postgresBin(): string | undefined {
  const base = '/usr/lib/postgresql';
  if (!existsSync(base)) return undefined;
  const versions = readdirSync(base).sort((a, b) => Number(b) - Number(a));
  for (const v of versions) if (existsSync(join(base, v, 'bin', 'initdb'))) return join(base, v, 'bin');
  return undefined;
}

/** PostgreSQL is tested when its binaries exist; in CI their absence is a failure, not a skip. */
export function postgresAvailable(): boolean {
  if (postgresBin()) return true;
  if (process.env.CI === 'true') throw new Error('PostgreSQL binaries are missing in CI (apt-get install postgresql)');
  return false;
}

export type DialectName = 'sqlite' | 'postgres';

/** The dialects every repository test runs against (PostgreSQL skipped only outside CI without binaries). */
export function testDialects(): DialectName[] {
  return postgresAvailable() ? ['sqlite', 'postgres'] : ['sqlite'];
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      s.close(() => resolve(typeof addr === 'object' && addr ? addr.port : 0));
    });
  });
}

function asServerUser(bin: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0 ? ['runuser', ['-u', 'postgres', '--', bin, ...args]] : [bin, args];
}

export interface TestPostgres {
  /** The server's URL for a database name. */
  url(database?: string): string;
  /** A fresh, empty database; returns its URL. */
  createDatabase(): Promise<string>;
  stop(): Promise<void>;
}

let counter = 0;

/** `durable`: keep fsync and synchronous commit on (benchmarks); tests turn them off. */
export async function startPostgres(options: { durable?: boolean } = {}): Promise<TestPostgres> {
  const bin = postgresBin();
  if (!bin) throw new Error('PostgreSQL binaries not found under /usr/lib/postgresql');
  const dir = mkdtempSync(join(tmpdir(), 'fengyu-pg-'));
  const data = join(dir, 'data');
  if (process.getuid?.() === 0) chownSync(dir, Number((await run('id', ['-u', 'postgres'])).stdout.trim()), Number((await run('id', ['-g', 'postgres'])).stdout.trim()));
  const port = await freePort();
  const [c1, a1] = asServerUser(join(bin, 'initdb'), ['-D', data, '-A', 'trust', '-U', 'fy', '-E', 'UTF8', '--locale=C.UTF-8', '--no-sync']);
  await run(c1, a1);
  const fast = options.durable ? '' : ' -c fsync=off -c synchronous_commit=off -c full_page_writes=off';
  const opts = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c max_connections=200${fast}`;
  const [c2, a2] = asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-o', opts, '-l', join(dir, 'log'), '-w', 'start']);
  await run(c2, a2);
  const url = (database = 'postgres') => `postgres://fy@127.0.0.1:${port}/${database}`;
  let stopped = false;
  return {
    url,
    async createDatabase() {
      counter += 1;
      const name = `t${process.pid}_${counter}`;
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`create database ${name}`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    async stop() {
      if (stopped) return;
      stopped = true;
      const [c3, a3] = asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']);
      try {
        await run(c3, a3);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

/**
 * Opens a migrated database of the dialect: a new in-memory SQLite database, or a new database on
 * the file's PostgreSQL server (started on first use; stop it with `stopSharedPostgres`).
 */
let shared: Promise<TestPostgres> | undefined;

export function sharedPostgres(): Promise<TestPostgres> {
  shared ??= startPostgres();
  return shared;
}

export async function stopSharedPostgres(): Promise<void> {
  const s = shared;
  shared = undefined;
  if (s) await (await s).stop();
}

export async function openTestDatabase(dialect: DialectName, home = ''): Promise<OpenedDatabase> {
  const opened = dialect === 'postgres' ? openPostgres(await (await sharedPostgres()).createDatabase()) : openDatabase(home, 'memory');
  await migrate(opened.db);
  return opened;
}
