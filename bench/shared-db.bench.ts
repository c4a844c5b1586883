import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { migrate, type OpenedDatabase, openDatabase, openPostgres } from '../packages/host/src/storage/database';
import { FairQueue } from '../packages/host/src/tasks/fair-queue';
import { SqliteTaskStore } from '../packages/host/src/tasks/task.store';
import { type BodyOutcome, TaskRegistry } from '../packages/host/src/tasks/task-registry';
import { postgresBin, startPostgres } from '../packages/host/test/support/postgres';
import { fmt, median } from './stats';

/**
 * Durable background-task dispatches/s of the same executor (fair policy, group-committed store,
 * no-op bodies) on the SQLite file (WAL) and on a local PostgreSQL 15 (a throw-away server, fsync
 * on as in production). Trials interleave the two engines; medians and the ratio are printed.
 */

const N = 2_000;
const TRIALS = 3;
const OWNERS = ['o0', 'o1', 'o2', 'o3', 'o4', 'o5', 'o6', 'o7'];
const logger = pino({ level: 'silent' });
const clock = { now: () => Date.now() };

async function dispatchesPerSecond(opened: OpenedDatabase): Promise<number> {
  const reg = new TaskRegistry({
    store: new SqliteTaskStore(opened.db),
    policy: new FairQueue(),
    clock,
    logger,
    body: { prepare: async () => ({ workflowVersion: 1, inputs: {} }), run: async (): Promise<BodyOutcome> => ({ state: 'completed', text: 'ok' }) },
  });
  let finished = 0;
  let submitted = 0;
  const waiters: Array<() => void> = [];
  let allDone!: () => void;
  const done = new Promise<void>((r) => {
    allDone = r;
  });
  reg.onFinished(() => {
    finished += 1;
    waiters.shift()?.();
    if (finished === N) allDone();
  });
  const t0 = performance.now();
  const producer = async (k: number) => {
    while (submitted < N) {
      submitted += 1;
      const r = await reg.submit({ ownerId: OWNERS[k % OWNERS.length] as string, workflowId: 'w', priority: 'normal', kind: 'workflow' });
      if (!r.ok) {
        submitted -= 1;
        await new Promise<void>((res) => waiters.push(res));
      }
    }
  };
  await Promise.all(Array.from({ length: 64 }, (_, k) => producer(k)));
  await done;
  return (N * 1000) / (performance.now() - t0);
}

export async function run(): Promise<string[]> {
  if (!postgresBin()) return ['skipped: PostgreSQL binaries not found (apt-get install postgresql)'];
  const server = await startPostgres({ durable: true });
  const home = mkdtempSync(join(tmpdir(), 'fengyu-bench-shared-'));
  const sqlite: number[] = [];
  const postgres: number[] = [];
  try {
    for (let i = 0; i < TRIALS; i++) {
      const lite = openDatabase(join(home, `t${i}`));
      await migrate(lite.db);
      sqlite.push(await dispatchesPerSecond(lite));
      await lite.close();
      const pg = openPostgres(await server.createDatabase());
      await migrate(pg.db);
      postgres.push(await dispatchesPerSecond(pg));
      await pg.close();
    }
  } finally {
    await server.stop();
    rmSync(home, { recursive: true, force: true });
  }
  const ms = median(sqlite);
  const mp = median(postgres);
  return [
    `durable task dispatches/s, ${N} no-op tasks, 64 producers, 8 owners, ${TRIALS} interleaved trials`,
    `  SQLite (WAL, synchronous=NORMAL)   median ${fmt(ms, 0)}/s   trials ${sqlite.map((v) => fmt(v, 0)).join(' ')}`,
    `  PostgreSQL 15 (local, fsync on)    median ${fmt(mp, 0)}/s   trials ${postgres.map((v) => fmt(v, 0)).join(' ')}`,
    `  ratio PostgreSQL / SQLite          ${fmt(mp / ms, 2)}`,
  ];
}
