import type { Admission } from './fair-queue';
import type { TaskRecord } from './task.store';

/** A live task whose run waits at a gate, as the re-entry sees it. */
export interface ParkedTask {
  record: TaskRecord;
  ended: boolean;
  /** While re-queued: continues the body once the policy gives the task a slot again. */
  resume?: () => void;
  /** While parked: lets the body go on without a slot (a kill withdrew it; it only winds down). */
  wake?: () => void;
}

export interface Reentry {
  closing(): boolean;
  /** Asks the policy for a slot for the task (as a new submission now). */
  submit(r: TaskRecord): Admission;
  /** Records the task's new state (`running` or `queued`); failures are only logged. */
  persist(): void;
}

/**
 * The gate was answered: the waiting task re-enters its queue (or starts at once) and the promise
 * resolves when it holds a slot (or the task ended or the host stops meanwhile). A full queue
 * never drops the re-entry: it is tried again every second.
 */
export function reenterQueue(entry: ParkedTask, ctx: Reentry): Promise<void> {
  const r = entry.record;
  if (entry.ended || ctx.closing() || r.state !== 'waiting') return Promise.resolve();
  return new Promise<void>((resolve) => {
    entry.wake = resolve;
    const admitted = () => {
      entry.resume = undefined;
      entry.wake = undefined;
      r.state = 'running';
      ctx.persist();
      resolve();
    };
    const tryAdmit = () => {
      if (entry.ended || ctx.closing()) return resolve();
      const a = ctx.submit(r);
      if (a.kind === 'start') return admitted();
      if (a.kind === 'queue') {
        entry.resume = admitted;
        r.state = 'queued';
        ctx.persist();
        return;
      }
      setTimeout(tryAdmit, 1000).unref();
    };
    tryAdmit();
  });
}
