import type { TaskRecord, TaskStore } from './task.store';
import { FINISHED_KEPT, RUNNING_INTERRUPTED } from './task-common';

/**
 * The single host's restart recovery, over its task store: what a stop left running, queued or
 * waiting, decided before anything new starts.
 */

/**
 * At start: tasks that were running when the host stopped become interrupted (never re-run: their
 * body may have taken effect), except those whose run was never written — their body had not
 * begun, so they count as queued; those only queued are returned, to be submitted again. A store
 * that cannot list queued tasks interrupts them too.
 */
export async function recoverTasks(store: TaskStore, nowMs: number): Promise<{ interrupted: number; leftQueued: TaskRecord[] }> {
  if (store.queued) await store.requeueUnbegun?.();
  const interrupted = await store.interruptLive(nowMs, RUNNING_INTERRUPTED, store.queued ? ['running'] : ['queued', 'running']);
  const leftQueued = (await store.queued?.()) ?? [];
  await store.prune(FINISHED_KEPT);
  return { interrupted: interrupted.length, leftQueued };
}

/** A task left queued by the stop that the queue has no room for after the restart. */
export function refusedAfterRestart(r: TaskRecord, nowMs: number): TaskRecord {
  return { ...r, state: 'interrupted', finishedMs: nowMs, error: { code: 'task_interrupted', message: 'The host stopped while this task was queued, and the queue had no room for it after the restart.' } };
}

/**
 * At start, after the runs were recovered: a task left `waiting` by the stop goes on waiting
 * when its run is parked at its gate, and is recorded interrupted otherwise. Returns how many were.
 */
export async function sweepWaitingTasks(store: TaskStore, nowMs: () => number, parked: (runId: string) => Promise<boolean>): Promise<number> {
  let n = 0;
  for (const r of (await store.waiting?.()) ?? []) {
    if (r.runId && (await parked(r.runId))) continue;
    await store.save({ ...r, state: 'interrupted', finishedMs: nowMs(), error: { code: 'task_interrupted', message: 'The host stopped while this task was waiting; its run could not wait on.' } });
    n += 1;
  }
  return n;
}
