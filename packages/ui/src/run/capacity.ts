import { ApiError } from '../api/client';
import { TASK_PRIORITIES, type TaskCapacity, type TaskPriority, type TaskSnapshot } from '@fengyu/protocol';

/**
 * What the run panel's capacity view says about queue pressure, pure: warnings (a full queue
 * bound, a class whose oldest task has waited at least 30 s), utilization, live durations, and
 * the reading of a capacity refusal (429) on submit.
 */

export const AGING_MS = 30_000;

export type CapacityWarning =
  | { key: 'globalQueueFull'; params: { max: number } }
  | { key: 'ownQueueFull'; params: { max: number } }
  | { key: 'aging'; params: { priority: TaskPriority; seconds: number } };

const OLDEST: Record<TaskPriority, keyof TaskCapacity> = {
  interactive: 'oldestInteractiveQueueWaitMs',
  normal: 'oldestNormalQueueWaitMs',
  batch: 'oldestBatchQueueWaitMs',
};

/** The oldest queue wait of one class (0 when it has nothing queued). */
export function oldestWait(c: TaskCapacity, priority: TaskPriority): number {
  const v = c[OLDEST[priority]];
  return typeof v === 'number' ? v : 0;
}

/** Warnings: either queue bound full; each class whose oldest queued task waited ≥ 30 s. */
export function capacityWarnings(c: TaskCapacity): CapacityWarning[] {
  const out: CapacityWarning[] = [];
  if (c.maxQueued > 0 && c.queued >= c.maxQueued) out.push({ key: 'globalQueueFull', params: { max: c.maxQueued } });
  if (c.ownerQueueLimit > 0 && (c.ownedQueueAvailable <= 0 || c.ownedQueued >= c.ownerQueueLimit)) out.push({ key: 'ownQueueFull', params: { max: c.ownerQueueLimit } });
  for (const p of TASK_PRIORITIES) {
    const wait = oldestWait(c, p);
    if (wait >= AGING_MS) out.push({ key: 'aging', params: { priority: p, seconds: Math.floor(wait / 1000) } });
  }
  return out;
}

/** Share of a bound in use, 0..100 (a zero bound reads as 0). */
export function percent(used: number, max: number): number {
  if (!(max > 0)) return 0;
  return Math.min(100, Math.max(0, Math.round((used / max) * 100)));
}

/** A task's queue wait and run duration at `now`, advanced from the snapshot read at `readAt`. */
export function liveDurations(task: TaskSnapshot, readAt: number, now: number): { queueWaitMs: number; runDurationMs?: number } {
  const since = Math.max(0, now - readAt);
  const active = task.state === 'queued' || task.state === 'running';
  const queueWaitMs = task.queueWaitMs + (active && task.queued ? since : 0);
  if (task.runDurationMs === undefined && !(active && !task.queued)) return { queueWaitMs };
  return { queueWaitMs, runDurationMs: (task.runDurationMs ?? 0) + (active && !task.queued ? since : 0) };
}

export type DurationText = { key: 'seconds'; params: { s: string } } | { key: 'minutes'; params: { m: number; s: number } } | { key: 'hours'; params: { h: number; m: number } };

/** A duration as one of three shapes the UI words in its language ("4.2 s", "3 min 5 s", "2 h 10 min"). */
export function durationText(ms: number): DurationText {
  const total = Math.max(0, ms) / 1000;
  if (total < 60) return { key: 'seconds', params: { s: total < 10 ? total.toFixed(1) : String(Math.floor(total)) } };
  const s = Math.floor(total);
  if (s < 3600) return { key: 'minutes', params: { m: Math.floor(s / 60), s: s % 60 } };
  return { key: 'hours', params: { h: Math.floor(s / 3600), m: Math.floor((s % 3600) / 60) } };
}

export type CapacityScope = 'owner' | 'global' | 'owner-priority' | 'global-priority';

export interface BusyRefusal {
  scope: CapacityScope;
  priority?: 'batch' | 'normal';
  retryAfterSeconds: number;
}

/** A capacity refusal (429 capacity_exhausted) read from an API error; undefined for anything else. */
export function busyRefusal(e: unknown): BusyRefusal | undefined {
  if (!(e instanceof ApiError) || (e.status !== 429 && e.code !== 'capacity_exhausted')) return undefined;
  const d = (e.details ?? {}) as { capacityScope?: string; capacityPriority?: string; retryAfterSeconds?: number };
  const scope = (['owner', 'global', 'owner-priority', 'global-priority'] as const).find((s) => s === d.capacityScope) ?? 'global';
  const priority = d.capacityPriority === 'batch' || d.capacityPriority === 'normal' ? d.capacityPriority : undefined;
  return { scope, ...(priority ? { priority } : {}), retryAfterSeconds: typeof d.retryAfterSeconds === 'number' && d.retryAfterSeconds > 0 ? d.retryAfterSeconds : 1 };
}
