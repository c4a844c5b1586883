import type { Db } from '../storage/database';
import type { SharedTaskStore } from './shared-task.store';
import type { TaskEngine } from './task-engine';

/** The end of a task whose host stopped (or died) while running it. */
export const INTERRUPTED = { code: 'task_interrupted', message: 'The host running this task stopped; it is not run again.' };

/**
 * The sweep of hosts on a shared database (their lease ran out, or this host stops), in one
 * transaction, each task once (every change is conditional on the row's state and host):
 * - a task whose run waits at its gate stays `waiting`, holding no slot (its job completed);
 * - a waiting task whose run a dead host's answer claimed ends interrupted with the run;
 * - a running task whose body had not begun (no run under its id, none recorded, no kill asked,
 *   not in `except`) goes back to `queued`, still released, its job sent again: it keeps the
 *   running slot it held and one live host takes it and runs it once;
 * - every other running task is interrupted and its job failed, never handed out again.
 * `unowned`: also running tasks that name no host. Returns how many tasks it changed.
 */
export function sweepTasks(store: SharedTaskStore, engine: TaskEngine, nowMs: number, hostIds: string[], unowned: boolean, except: string[]): Promise<number> {
  return store.transaction(async (trx) => {
    const db = trx as unknown as Db;
    const parked = await store.parkWaiting(trx, hostIds, unowned);
    await engine.complete(
      db,
      parked.filter((r) => r.released_ms !== null).map((r) => r.id),
    );
    const orphaned = await store.interruptOrphanedWaiting(trx, hostIds, nowMs, INTERRUPTED);
    const requeued = await store.requeueUnbegun(trx, hostIds, unowned, except);
    await engine.resend(db, requeued);
    const rows = await store.interruptRunning(trx, hostIds, unowned, nowMs, INTERRUPTED);
    await engine.fail(
      db,
      rows.filter((r) => r.released_ms !== null).map((r) => r.id),
      'the host running this task stopped',
    );
    return rows.length + parked.length + orphaned.length + requeued.length;
  });
}
