import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { type Db, migrate, type OpenedDatabase, openDatabase, openPostgres } from '../packages/host/src/storage/database';
import { FairQueue } from '../packages/host/src/tasks/fair-queue';
import { SqliteTaskStore } from '../packages/host/src/tasks/task.store';
import { SharedTaskRegistry } from '../packages/host/src/tasks/shared-task-registry';
import { TaskEngine } from '../packages/host/src/tasks/task-engine';
import type { BodyOutcome, TaskBody } from '../packages/host/src/tasks/task-common';
import { TaskRegistry } from '../packages/host/src/tasks/task-registry';
import { postgresBin, startPostgres } from '../packages/host/test/support/postgres';
import { fmt, median } from './stats';

/**
 * Durable background-task dispatches/s, in one run, on the two deployments:
 * - SQLite: the single host's executor (fair policy, group-committed store) on the SQLite file;
 * - PostgreSQL, one host's executor on the shared database (no job engine), for reference;
 * - PostgreSQL through the shared queue: admission under the database lock, the elected
 *   dispatcher's fair policy, pg-boss hand-off and take, one host and then two hosts (two
 *   executors, one database) splitting the producers.
 * No-op bodies; a throw-away local PostgreSQL 15 with fsync on, as in production. Trials
 * interleave; medians are printed. Also the shared queue's enqueue → body start at low load.
 */

const N = 1_000;
const TRIALS = 3;
const OWNERS = ['o0', 'o1', 'o2', 'o3', 'o4', 'o5', 'o6', 'o7'];
const logger = pino({ level: 'silent' });
const clock = { now: () => Date.now() };
const noop: TaskBody = { prepare: async () => ({ workflowVersion: 1, inputs: {} }), run: async (): Promise<BodyOutcome> => ({ state: 'completed', text: 'ok' }) };

type Executor = Pick<TaskRegistry, 'submit' | 'onFinished' | 'close'>;

/** 64 producers over the executors (round robin), retrying refusals when a task ends; tasks/s. */
async function drive(executors: Executor[]): Promise<number> {
  let finished = 0;
  let submitted = 0;
  const waiters: Array<() => void> = [];
  let allDone!: () => void;
  const done = new Promise<void>((r) => {
    allDone = r;
  });
  const retry = setInterval(() => {
    // another host's end is seen there: wake the refused producers now and then as well
    for (const w of waiters.splice(0)) w();
  }, 50);
  for (const e of executors)
    e.onFinished(() => {
      finished += 1;
      waiters.shift()?.();
      if (finished === N) allDone();
    });
  const t0 = performance.now();
  const producer = async (k: number) => {
    const e = executors[k % executors.length] as Executor;
    while (submitted < N) {
      submitted += 1;
      const r = await e.submit({ ownerId: OWNERS[k % OWNERS.length] as string, workflowId: 'w', priority: 'normal', kind: 'workflow' });
      if (!r.ok) {
        submitted -= 1;
        await new Promise<void>((res) => waiters.push(res));
      }
    }
  };
  await Promise.all(Array.from({ length: 64 }, (_, k) => producer(k)));
  await done;
  clearInterval(retry);
  return (N * 1000) / (performance.now() - t0);
}

function single(opened: OpenedDatabase): TaskRegistry {
  return new TaskRegistry({ store: new SqliteTaskStore(opened.db), policy: new FairQueue(), clock, logger, body: noop });
}

async function sharedHosts(url: string, db: Db, hosts: number): Promise<SharedTaskRegistry[]> {
  const out: SharedTaskRegistry[] = [];
  for (let i = 0; i < hosts; i++) {
    const engine = await TaskEngine.start(url, logger);
    const r = new SharedTaskRegistry({ db, url, hostId: `bench-host-${i}`, engine, clock, logger, body: noop });
    r.start();
    out.push(r);
  }
  return out;
}

/** Enqueue → body start of single tasks on an idle shared queue (ms, one host). */
async function startLatency(url: string, db: Db): Promise<number[]> {
  let started: (() => void) | undefined;
  const body: TaskBody = {
    prepare: noop.prepare,
    run: async () => {
      started?.();
      return { state: 'completed', text: '' };
    },
  };
  const engine = await TaskEngine.start(url, logger);
  const reg = new SharedTaskRegistry({ db, url, hostId: 'bench-latency', engine, clock, logger, body });
  reg.start();
  const out: number[] = [];
  try {
    for (let i = 0; i < 30; i++) {
      const began = new Promise<void>((r) => {
        started = r;
      });
      const t0 = performance.now();
      await reg.submit({ ownerId: 'o0', workflowId: 'w', priority: 'interactive', kind: 'workflow' });
      await began;
      out.push(performance.now() - t0);
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    await reg.close();
  }
  return out;
}

export async function run(): Promise<string[]> {
  if (!postgresBin()) return ['skipped: PostgreSQL binaries not found (apt-get install postgresql)'];
  const server = await startPostgres({ durable: true });
  const home = mkdtempSync(join(tmpdir(), 'fengyu-bench-shared-'));
  const sqlite: number[] = [];
  const postgres: number[] = [];
  const shared1: number[] = [];
  const shared2: number[] = [];
  let latency: number[] = [];
  try {
    for (let i = 0; i < TRIALS; i++) {
      const lite = openDatabase(join(home, `t${i}`));
      await migrate(lite.db);
      sqlite.push(await drive([single(lite)]));
      await lite.close();
      const pg = openPostgres(await server.createDatabase());
      await migrate(pg.db);
      postgres.push(await drive([single(pg)]));
      await pg.close();
      for (const [hosts, into] of [
        [1, shared1],
        [2, shared2],
      ] as const) {
        const url = await server.createDatabase();
        const opened = hosts === 1 ? [openPostgres(url)] : [openPostgres(url), openPostgres(url)];
        await migrate((opened[0] as OpenedDatabase).db);
        const regs = hosts === 1 ? await sharedHosts(url, (opened[0] as OpenedDatabase).db, 1) : [...(await sharedHosts(url, (opened[0] as OpenedDatabase).db, 1)), ...(await sharedHosts(url, (opened[1] as OpenedDatabase).db, 1))];
        into.push(await drive(regs));
        for (const r of regs) await r.close();
        for (const o of opened) await o.close();
      }
    }
    const url = await server.createDatabase();
    const opened = openPostgres(url);
    await migrate(opened.db);
    latency = await startLatency(url, opened.db);
    await opened.close();
  } finally {
    await server.stop();
    rmSync(home, { recursive: true, force: true });
  }
  const ms = median(sqlite);
  const row = (label: string, v: number[]) => `  ${label.padEnd(46)} median ${fmt(median(v), 0)}/s   ×${fmt(median(v) / ms, 2)} of SQLite   trials ${v.map((x) => fmt(x, 0)).join(' ')}`;
  const sorted = [...latency].sort((x, y) => x - y);
  return [
    `durable task dispatches/s, ${N} no-op tasks, 64 producers, 8 owners, ${TRIALS} interleaved trials`,
    row('SQLite (WAL, synchronous=NORMAL), one host', sqlite),
    row('PostgreSQL 15, one host executor (no engine)', postgres),
    row('PostgreSQL 15, shared queue (pg-boss), 1 host', shared1),
    row('PostgreSQL 15, shared queue (pg-boss), 2 hosts', shared2),
    `  shared queue enqueue → body start, idle, 30 tasks: p50 ${fmt(sorted[Math.floor(sorted.length / 2)] ?? 0, 1)} ms, max ${fmt(sorted.at(-1) ?? 0, 1)} ms`,
  ];
}
