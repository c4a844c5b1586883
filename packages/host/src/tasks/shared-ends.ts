import type { Logger } from 'pino';
import type { Db } from '../storage/database';
import type { SharedTaskStore } from './shared-task.store';
import type { TaskRecord } from './task.store';
import type { TaskEngine } from './task-engine';

/**
 * Group commit of the ends of the tasks one host runs on the shared queue: the ends recorded
 * while a commit is in flight go together in the next one (each row only while it is still
 * running on this host, and their jobs completed, in one transaction).
 */
export class SharedEnds {
  private ending: Array<{ record: TaskRecord; resolve: (recorded: boolean) => void }> = [];
  private flushing = false;

  constructor(
    private readonly store: SharedTaskStore,
    private readonly engine: TaskEngine,
    private readonly hostId: string,
    private readonly logger: Logger,
  ) {}

  /** Resolves true when this task's end was recorded (false: it no longer ran here, e.g. swept). */
  record(record: TaskRecord): Promise<boolean> {
    return new Promise((resolve) => {
      this.ending.push({ record, resolve });
      if (!this.flushing) void this.flush();
    });
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.ending.length) {
      const batch = this.ending.splice(0);
      let recorded = new Set<string>();
      try {
        recorded = await this.store.transaction(async (trx) => {
          const ok = new Set<string>();
          for (const { record } of batch) {
            if (await this.store.recordEnd(trx, record, this.hostId)) ok.add(record.id);
          }
          await this.engine.complete(trx as unknown as Db, [...ok]);
          return ok;
        });
      } catch (err) {
        this.logger.error({ err, tasks: batch.map((b) => b.record.id) }, 'could not record the end of tasks');
      }
      for (const b of batch) b.resolve(recorded.has(b.record.id));
    }
    this.flushing = false;
  }
}
