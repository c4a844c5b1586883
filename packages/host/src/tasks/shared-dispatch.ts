import type pg from 'pg';
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import { type Db, loadPg } from '../storage/database';
import { FairQueue, type QueueLimits, type QueueTask } from './fair-queue';
import type { LiveRow, SharedTaskStore } from './shared-task.store';
import type { TaskEngine } from './task-engine';
import type { TaskPriority } from './task-submitter';

/**
 * The shared queue's policy state and its dispatcher. Admission replays the live rows into a
 * `FairQueue` (`replayQueue`); one elected host (a session advisory lock; another host takes over
 * when its connection goes) mirrors the live rows into a long-lived `FairQueue` and, whenever
 * running slots are free, hands the tasks it starts to the job engine.
 */

const DISPATCH_LOCK = 7_001_003;

function queueTask(r: LiveRow): QueueTask {
  return { id: r.id, owner: r.owner, priority: r.priority as TaskPriority };
}

const isHeld = (r: LiveRow) => r.state === 'running' || r.released_ms !== null;

/** The policy state the live rows stand for: held tasks run, the others wait in submission order. */
export function replayQueue(rows: LiveRow[], limits: QueueLimits): FairQueue {
  // no running slot is ever free in a replay: a submission is queued or refused, never started
  const q = new FairQueue({ ...limits, maxRunning: 0 });
  for (const r of rows) if (isHeld(r)) q.adopt(queueTask(r));
  for (const r of rows) if (!isHeld(r)) q.submit(queueTask(r), r.submitted_ms);
  return q;
}

export interface DispatcherDeps {
  url: string;
  hostId: string;
  store: SharedTaskStore;
  engine: TaskEngine;
  clock: Clock;
  logger: Logger;
  limits: QueueLimits;
}

export class SharedDispatcher {
  private mirror: { queue: FairQueue; known: Map<string, 'queued' | 'running'> } | undefined;
  private lockClient: pg.Client | undefined;
  leader = false;

  constructor(private readonly deps: DispatcherDeps) {}

  async tryLead(): Promise<void> {
    try {
      if (!this.lockClient) {
        const client = new (loadPg().Client)({ connectionString: this.deps.url, application_name: 'fengyu-dispatcher' });
        client.on('error', () => this.resign(client));
        await client.connect();
        this.lockClient = client;
      }
      const r = await this.lockClient.query<{ ok: boolean }>('select pg_try_advisory_lock($1) as ok', [DISPATCH_LOCK]);
      if (r.rows[0]?.ok) {
        this.leader = true;
        this.mirror = undefined;
        this.deps.logger.info({ hostId: this.deps.hostId }, 'this host dispatches the shared task queue');
      }
    } catch (err) {
      this.deps.logger.warn({ err }, 'dispatcher election failed');
      if (this.lockClient) this.resign(this.lockClient);
    }
  }

  /** Gives the lock up (host stop). */
  stop(): void {
    if (this.lockClient) this.resign(this.lockClient);
  }

  /** The lock's connection is gone: so is the lock; another host (or this one, later) takes over. */
  private resign(client: pg.Client): void {
    if (this.lockClient === client) this.lockClient = undefined;
    this.leader = false;
    this.mirror = undefined;
    void client.end().catch(() => undefined);
  }

  /** Mirrors the live rows into the dispatcher's queue and hands the tasks it starts to the engine. */
  async dispatch(rows: LiveRow[]): Promise<void> {
    const limits = this.deps.limits;
    // after a take-over the turn order starts afresh from the rows
    this.mirror ??= {
      queue: new FairQueue({ maxRunning: limits.maxRunning, ownerMaxRunning: limits.ownerMaxRunning, maxQueued: Number.POSITIVE_INFINITY, ownerQueueLimit: Number.POSITIVE_INFINITY, batchOwner: Number.POSITIVE_INFINITY, batchGlobal: Number.POSITIVE_INFINITY, nonInteractiveOwner: Number.POSITIVE_INFINITY, nonInteractiveGlobal: Number.POSITIVE_INFINITY }),
      known: new Map(),
    };
    const { queue, known } = this.mirror;
    const live = new Set(rows.map((r) => r.id));
    const start: QueueTask[] = [];
    for (const [id, state] of known) {
      if (live.has(id)) continue;
      known.delete(id);
      if (state === 'running') start.push(...queue.finish(id));
      else queue.withdraw(id);
    }
    for (const r of rows) {
      if (known.has(r.id)) continue;
      const task = queueTask(r);
      if (isHeld(r)) {
        queue.adopt(task);
        known.set(r.id, 'running');
      } else if (queue.submit(task, r.submitted_ms).kind === 'start') start.push(task);
      else known.set(r.id, 'queued');
    }
    for (const t of start) known.set(t.id, 'running');
    if (start.length) await this.release(start.map((t) => t.id));
  }

  /** Hands queued tasks to the engine (each once: only a queued, not yet released row is). */
  private async release(ids: string[]): Promise<void> {
    const engine = this.deps.engine;
    const store = this.deps.store;
    await store.transaction(async (trx) => {
      const released = await store.markReleased(trx, ids, this.deps.clock.now());
      await engine.send(trx as unknown as Db, released);
    });
  }
}
