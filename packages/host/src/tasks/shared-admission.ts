import type { KeptSeal } from '../secrets/vault';
import type { Db } from '../storage/database';
import type { Admission, QueueLimits } from './fair-queue';
import { replayQueue } from './shared-dispatch';
import type { SharedTaskStore } from './shared-task.store';
import type { TaskRecord } from './task.store';

const ADMISSION_LOCK = 7_001_002;

interface Pending {
  record: TaskRecord;
  /** The task's secret input values, written in the transaction that admits it (never for a refused one). */
  seal: KeptSeal | undefined;
  resolve: (a: Admission) => void;
  reject: (err: unknown) => void;
}

/**
 * Admits submissions in batches: the submissions waiting on this host go through one
 * transaction under the database-wide lock, one replay of the live rows, and one insert of the
 * admitted rows (each decided after the ones before it). One connection per host waits for the
 * lock, so admissions never starve dispatch and work of connections.
 */
export class SharedAdmissions {
  private waiting: Pending[] = [];
  private admitting = false;

  constructor(
    private readonly store: SharedTaskStore,
    private readonly limits: QueueLimits,
  ) {}

  /** The queue's decision for a new task; the task's row (and its sealed values) are written when it is not refused. */
  admit(record: TaskRecord, seal?: KeptSeal): Promise<Admission> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ record, seal, resolve, reject });
      if (!this.admitting) void this.batches();
    });
  }

  private async batches(): Promise<void> {
    this.admitting = true;
    while (this.waiting.length) {
      const batch = this.waiting.splice(0);
      try {
        const decisions = await this.store.transaction(async (trx) => {
          await this.store.lockAdmission(trx, ADMISSION_LOCK);
          const replica = replayQueue(await this.store.liveRows(trx), this.limits);
          const out = batch.map((b) => replica.submit({ id: b.record.id, owner: b.record.ownerId, priority: b.record.priority }, b.record.submittedMs));
          const admitted = batch.filter((_, i) => out[i]?.kind !== 'refuse');
          await this.store.insert(
            trx,
            admitted.map((b) => b.record),
          );
          for (const b of admitted) await b.seal?.writeIn(trx as unknown as Db);
          return out;
        });
        batch.forEach((b, i) => {
          if (decisions[i]?.kind !== 'refuse') b.seal?.committed();
          b.resolve(decisions[i] as Admission);
        });
      } catch (err) {
        for (const b of batch) b.reject(err);
      }
    }
    this.admitting = false;
  }
}
