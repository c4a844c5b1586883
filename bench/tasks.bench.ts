import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import pino from 'pino';
import { type Db, migrate, type OpenedSqlite, openDatabase } from '../packages/host/src/storage/database';
import { type Admission, DEFAULT_LIMITS, FairQueue, type QueuePolicy, type QueueTask } from '../packages/host/src/tasks/fair-queue';
import { SqliteTaskStore, type TaskRecord } from '../packages/host/src/tasks/task.store';
import type { BodyOutcome, TaskBody } from '../packages/host/src/tasks/task-common';
import { TaskRegistry } from '../packages/host/src/tasks/task-registry';
import type { TaskCapacity, TaskPriority } from '@fengyu/protocol';
import { fineClock } from '../packages/host/src/tasks/tasks.domain';
import { loadAverage } from './real-host';
import { fmt, median, p99 } from './stats';

/**
 * The background-task executor on the host's SQLite file (opened and migrated as the host does:
 * WAL, synchronous NORMAL, checkpoints on their own thread), with no-op bodies, so what is
 * measured is the executor: admission, durable records (insert, start, end), dispatch.
 * (a) durable dispatches/s, next to the floor: the same records written straight to the store;
 * (b) enqueue → start latency at half of (a)'s load (submit called → body entered, both in this
 *     process), next to the floor: one durable insert; A/B in the same run against a second file
 *     that checkpoints inline on its connection (every 8,000 pages), interleaved;
 * (c) class shares under saturation against 4:2:1, next to plain FIFO fed the same way.
 */

const logger = pino({ level: 'silent' });
const clock = fineClock();
type Host = { db: Db };

/** A body that does nothing (its start time is recorded). */
function noopBody(onStart?: (task: TaskRecord) => void, holdMs = 0): TaskBody {
  return {
    prepare: async () => ({ workflowVersion: 1, inputs: {} }),
    run: async (task): Promise<BodyOutcome> => {
      onStart?.(task);
      if (holdMs > 0) await new Promise((r) => setTimeout(r, holdMs));
      return { state: 'completed', text: 'ok' };
    },
  };
}

class FifoPolicy implements QueuePolicy {
  private readonly q: QueueTask[] = [];
  private readonly running = new Set<string>();
  submit(task: QueueTask): Admission {
    if (this.running.size < DEFAULT_LIMITS.maxRunning && this.q.length === 0) {
      this.running.add(task.id);
      return { kind: 'start' };
    }
    if (this.q.length >= DEFAULT_LIMITS.maxQueued) return { kind: 'refuse', capacityScope: 'global' };
    this.q.push(task);
    return { kind: 'queue' };
  }
  finish(id: string): QueueTask[] {
    if (!this.running.delete(id)) return [];
    const next = this.q.shift();
    if (!next) return [];
    this.running.add(next.id);
    return [next];
  }
  withdraw(id: string): boolean {
    const i = this.q.findIndex((t) => t.id === id);
    if (i >= 0) this.q.splice(i, 1);
    return i >= 0;
  }
  queuedAt(): number | undefined {
    return undefined;
  }
  isRunning(id: string): boolean {
    return this.running.has(id);
  }
  capacity(): TaskCapacity {
    throw new Error('unused');
  }
}

function registry(host: Host, body: TaskBody, policy: QueuePolicy = new FairQueue()): TaskRegistry {
  return new TaskRegistry({ store: new SqliteTaskStore(host.db), policy, clock, logger, body });
}

const OWNERS = ['o0', 'o1', 'o2', 'o3', 'o4', 'o5', 'o6', 'o7'];

/** Pushes `n` tasks through from 64 concurrent producers, keeping the queue full (a refused producer waits for the next end). */
async function throughput(reg: TaskRegistry, n: number): Promise<number> {
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
    if (finished === n) allDone();
  });
  const t0 = performance.now();
  const producer = async (k: number) => {
    while (submitted < n) {
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
  return (n * 1000) / (performance.now() - t0);
}

/** The floor of (a): the same records (insert, start, end) of `n` tasks written straight to the store by 64 writers. */
async function storeFloor(host: Host, n: number): Promise<number> {
  const store = new SqliteTaskStore(host.db);
  let next = 0;
  const t0 = performance.now();
  const writer = async () => {
    while (next < n) {
      const id = `floor-${Math.random()}-${next++}`;
      const rec: TaskRecord = { id, ownerId: 'f', kind: 'workflow', priority: 'normal', state: 'queued', workflowId: 'w', workflowVersion: 1, inputs: {}, permissionMode: 'ask', submittedMs: Date.now(), output: { text: '', truncated: false } };
      await store.save(rec);
      await store.save({ ...rec, state: 'running', startedMs: Date.now() });
      await store.save({ ...rec, state: 'completed', startedMs: rec.submittedMs, finishedMs: Date.now(), output: { text: 'ok', truncated: false } });
    }
  };
  await Promise.all(Array.from({ length: 64 }, writer));
  return (n * 1000) / (performance.now() - t0);
}

/** (b): submissions paced at `rate`/s; each body holds its slot `holdMs`; latency submit → body start. */
async function latencyAtLoad(host: Host, rate: number, n: number, holdMs: number): Promise<number[]> {
  const submittedAt = new Map<string, number>();
  const lat: number[] = [];
  const early = new Map<string, number>();
  const reg = registry(
    host,
    noopBody((task) => {
      const at = performance.now();
      const s = submittedAt.get(task.id);
      if (s === undefined) early.set(task.id, at);
      else lat.push(at - s);
    }, holdMs),
  );
  const t0 = performance.now();
  let refused = 0;
  const pending: Promise<unknown>[] = [];
  for (let i = 0; i < n; i++) {
    const due = t0 + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    const at = performance.now();
    pending.push(
      reg.submit({ ownerId: OWNERS[i % OWNERS.length] as string, workflowId: 'w', priority: 'interactive', kind: 'workflow' }).then((r) => {
        if (!r.ok) refused += 1;
        else {
          submittedAt.set(r.task.id, at);
          const e = early.get(r.task.id);
          if (e !== undefined) lat.push(e - at);
        }
      }),
    );
  }
  await Promise.all(pending);
  await new Promise((r) => setTimeout(r, holdMs * 3 + 50));
  if (refused) lat.push(...Array(refused).fill(Number.POSITIVE_INFINITY));
  return lat;
}

async function insertFloor(host: Host, n: number): Promise<number[]> {
  const store = new SqliteTaskStore(host.db);
  const out: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await store.save({ id: `ins-${i}`, ownerId: 'f', kind: 'workflow', priority: 'normal', state: 'running', workflowId: 'w', workflowVersion: 1, inputs: {}, permissionMode: 'ask', submittedMs: Date.now(), output: { text: '', truncated: false } });
    out.push(performance.now() - t);
    await new Promise((r) => setTimeout(r, 1));
  }
  return out;
}

/** (c): every owner keeps 8 tasks of each class queued; a start is replaced by one of the same owner and class. */
async function shares(host: Host, policy: QueuePolicy, dispatches: number): Promise<Record<TaskPriority, number>> {
  const counts: Record<TaskPriority, number> = { interactive: 0, normal: 0, batch: 0 };
  let seen = 0;
  let stop = false;
  let allDone!: () => void;
  const done = new Promise<void>((r) => {
    allDone = r;
  });
  const owners = OWNERS.slice(0, 3);
  const reg = registry(
    host,
    noopBody((task) => {
      if (stop) return;
      // each start is replaced at once by a task of the same owner and class: every class stays queued
      void reg.submit({ ownerId: task.ownerId, workflowId: 'w', priority: task.priority, kind: 'workflow' });
      seen += 1;
      if (seen > 144) counts[task.priority] += 1; // after the initial fill has drained through the slots
      if (seen >= dispatches + 144) {
        stop = true;
        allDone();
      }
    }),
    policy,
  );
  for (let round = 0; round < 8; round++) for (const o of owners) for (const p of ['batch', 'normal', 'interactive'] as TaskPriority[]) await reg.submit({ ownerId: o, workflowId: 'w', priority: p, kind: 'workflow' });
  await done;
  await reg.close();
  const total = counts.interactive + counts.normal + counts.batch;
  return { interactive: (100 * counts.interactive) / total, normal: (100 * counts.normal) / total, batch: (100 * counts.batch) / total };
}

async function database(home: string, checkpointThread: boolean): Promise<OpenedSqlite> {
  const o = openDatabase(home, 'file', 'normal', { checkpointThread });
  await migrate(o.db);
  return o;
}

export async function run(): Promise<string[]> {
  const home = mkdtempSync(join(tmpdir(), 'fengyu-bench-tasks-'));
  const opened = await database(join(home, 'threaded'), true);
  const inline = await database(join(home, 'inline'), false);
  const host: Host = { db: opened.db };
  const lines: string[] = [`load before: ${loadAverage()}`, ''];
  try {
    const N = 5000;
    await throughput(registry(host, noopBody()), 500); // warm-up
    const rates: number[] = [];
    const floors: number[] = [];
    for (let rep = 0; rep < 3; rep++) {
      rates.push(await throughput(registry(host, noopBody()), N));
      floors.push(await storeFloor(host, N));
    }
    const rate = median(rates);
    const floor = median(floors);
    lines.push(
      '## background tasks (no-op bodies, real host SQLite file, WAL)',
      '',
      '| measure | executor | floor | ratio |',
      '|---|---|---|---|',
      `| durable dispatches/s (median of 3 × ${N}) | ${fmt(rate, 0)} | ${fmt(floor, 0)} (the same three saves straight to the store, 64 writers) | ${fmt(rate / floor, 2)}× |`,
    );

    // half load: bodies hold a slot 10 ms, so 16 slots serve 1,600/s; offer half of the lesser of that and (a)
    const hold = 10;
    const half = Math.min(rate, (DEFAULT_LIMITS.maxRunning * 1000) / hold) / 2;
    // interleaved A/B: the host's file (checkpoint thread) and a file that checkpoints inline
    const lat: number[] = [];
    const latInline: number[] = [];
    const perRep: string[] = [];
    for (let rep = 0; rep < 3; rep++) {
      const a = await latencyAtLoad(host, half, 3000, hold);
      const b = await latencyAtLoad({ db: inline.db }, half, 3000, hold);
      lat.push(...a);
      latInline.push(...b);
      perRep.push(`${fmt(p99(a), 2)} vs ${fmt(p99(b), 2)}`);
    }
    const ins = await insertFloor(host, 500);
    lines.push(
      `| enqueue → start at half load (${fmt(half, 0)}/s, 10 ms bodies, 3 × 3,000) median / p99 ms | ${fmt(median(lat))} / ${fmt(p99(lat))} | ${fmt(median(ins))} / ${fmt(p99(ins))} (one durable save) | p99 ${fmt(p99(lat) / p99(ins), 2)}× |`,
      `| the same, A/B: the file checkpointing inline (8,000 pages) | ${fmt(median(latInline))} / ${fmt(p99(latInline))} | p99 per repetition, thread vs inline: ${perRep.join('; ')} ms | p99 ${fmt(p99(lat) / p99(latInline), 2)}× of inline |`,
    );

    const fair = await shares(host, new FairQueue(), 7000);
    const fifo = await shares(host, new FifoPolicy(), 7000);
    const expect = { interactive: 400 / 7, normal: 200 / 7, batch: 100 / 7 };
    lines.push('', '| class shares under saturation (7,000 dispatches, 3 owners) | 4:2:1 target % | fair queue % | fair ÷ target | plain FIFO % (same feed) |', '|---|---|---|---|---|');
    for (const p of ['interactive', 'normal', 'batch'] as TaskPriority[]) {
      lines.push(`| ${p} | ${fmt(expect[p], 1)} | ${fmt(fair[p], 2)} | ${fmt(fair[p] / expect[p], 3)} | ${fmt(fifo[p], 2)} |`);
    }
  } finally {
    await opened.close();
    await inline.close();
    rmSync(home, { recursive: true, force: true });
  }
  lines.push('', `load after: ${loadAverage()}`);
  return lines;
}
