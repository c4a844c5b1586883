import { CompiledQuery } from 'kysely';
import type { Logger } from 'pino';
import type { Db } from '../storage/database';

/**
 * The job engine behind the shared task queue: pg-boss, in its own schema of the shared
 * PostgreSQL database. A released task is one pg-boss job (job id = task id); a worker takes it (`fetch`, state
 * active) in the same transaction that marks the task running on its host, and completes it in
 * the transaction that records the task's end. Retries are off (retry limit 0): a job whose
 * worker died is failed — by the sweep of the dead host, or by pg-boss's own expiry as a
 * backstop — and its task is recorded `interrupted`, never run again; one whose body had not begun
 * (no run written) is put back instead, its job sent again (`resend`). Loaded only on PostgreSQL.
 */

export const TASK_QUEUE = 'fengyu-tasks';
/** pg-boss's expiry of an active job: the backstop when no host sweeps (its maximum is under 24 h). */
export const JOB_EXPIRE_SECONDS = 23 * 3600;

export interface EngineJob {
  id: string;
  taskId: string;
}

/** pg-boss's transaction seam: its statements run on the caller's connection. */
interface SqlExecutor {
  executeSql(text: string, values?: unknown[]): Promise<{ rows: unknown[] }>;
}

function executor(trx: Db): SqlExecutor {
  return {
    executeSql: async (text, values) => {
      const r = await trx.executeQuery(CompiledQuery.raw(text, (values ?? []) as unknown[]));
      return { rows: r.rows as unknown[] };
    },
  };
}

// The parts of pg-boss 10 this module calls (its own typings are wider).
interface Boss {
  on(event: 'error', fn: (err: unknown) => void): void;
  start(): Promise<unknown>;
  stop(options: { graceful: boolean; wait: boolean; close?: boolean }): Promise<void>;
  getQueue(name: string): Promise<unknown>;
  createQueue(name: string, options: Record<string, unknown>): Promise<void>;
  insert(jobs: object[], options: Record<string, unknown>): Promise<unknown>;
  fetch: (name: string, options: Record<string, unknown>) => Promise<Array<{ id: string; data: { taskId: string } }>>;
  complete(name: string, id: string | string[], data?: object, options?: Record<string, unknown>): Promise<unknown>;
  fail(name: string, id: string | string[], data?: object, options?: Record<string, unknown>): Promise<unknown>;
  cancel(name: string, id: string | string[], options?: Record<string, unknown>): Promise<unknown>;
  deleteJob(name: string, id: string | string[], options?: Record<string, unknown>): Promise<unknown>;
}

export class TaskEngine {
  private constructor(private readonly boss: Boss) {}

  /** Starts pg-boss on the database (installs or upgrades its schema once across hosts) and creates the queue. */
  static async start(url: string, logger: Logger): Promise<TaskEngine> {
    const { default: PgBoss } = (await import('pg-boss')) as unknown as { default: new (options: Record<string, unknown>) => Boss };
    // Its own small pool; it supervises expiry and archiving, no cron (schedules claim rows themselves).
    const boss = new PgBoss({ connectionString: url, max: 3, schedule: false, supervise: true, application_name: 'fengyu-tasks' });
    boss.on('error', (err) => logger.warn({ err }, 'job engine error'));
    await boss.start();
    if (!(await boss.getQueue(TASK_QUEUE))) {
      try {
        await boss.createQueue(TASK_QUEUE, { policy: 'standard', retryLimit: 0, expireInSeconds: JOB_EXPIRE_SECONDS });
      } catch (err) {
        // another host created it at the same moment
        if (!(await boss.getQueue(TASK_QUEUE))) throw err;
      }
    }
    return new TaskEngine(boss);
  }

  /** Enqueues released tasks inside the caller's transaction (one statement); each job id is its task id. */
  async send(trx: Db, taskIds: string[]): Promise<void> {
    if (taskIds.length === 0) return;
    const jobs = taskIds.map((id) => ({ id, name: TASK_QUEUE, data: { taskId: id }, retryLimit: 0, expireInSeconds: JOB_EXPIRE_SECONDS }));
    // pg-boss 10's batch insert returns no ids; each id is the task's, released once (a conditional update)
    await this.boss.insert(jobs, { db: executor(trx) });
  }

  /** Takes up to `n` jobs (they become active) inside the caller's transaction. */
  async take(trx: Db, n: number): Promise<EngineJob[]> {
    const jobs = await this.boss.fetch(TASK_QUEUE, { batchSize: n, db: executor(trx) });
    return jobs.map((j) => ({ id: j.id, taskId: j.data.taskId }));
  }

  async complete(trx: Db, jobIds: string[]): Promise<void> {
    if (jobIds.length) await this.boss.complete(TASK_QUEUE, jobIds, undefined, { db: executor(trx) });
  }

  /** Fails jobs whose worker is gone; with retries off they are never handed out again. */
  async fail(trx: Db, jobIds: string[], reason: string): Promise<void> {
    if (jobIds.length) await this.boss.fail(TASK_QUEUE, jobIds, { reason }, { db: executor(trx) });
  }

  /** Cancels jobs not yet taken (a queued task killed after its release). */
  async cancel(trx: Db, jobIds: string[]): Promise<void> {
    if (jobIds.length) await this.boss.cancel(TASK_QUEUE, jobIds, { db: executor(trx) });
  }

  /**
   * Hands the jobs of tasks put back into the queue out again (a dead host's task whose body had
   * not begun): each job, whatever state its dead worker left it in, is replaced by a new one under
   * the same id, in the caller's transaction, so exactly one worker takes it next.
   */
  async resend(trx: Db, taskIds: string[]): Promise<void> {
    if (taskIds.length === 0) return;
    await this.boss.deleteJob(TASK_QUEUE, taskIds, { db: executor(trx) });
    await this.send(trx, taskIds);
  }

  async stop(): Promise<void> {
    await this.boss.stop({ graceful: false, wait: true, close: true });
  }
}
