import type { KeptSeal } from '../secrets/vault';
import type { AdmittedWithin } from './task-submitter';
import type { TaskRecord } from './task.store';

/** The part of a live task a producer's transaction settles: its record and its first commit. */
export interface PendingTask {
  record: TaskRecord;
  /** The task's first commit (its creation); its body never starts before it. */
  persisted: Promise<void>;
}

/** What a producer's commit or rollback does to a task admitted within it. */
export interface WithinOutcome<E extends PendingTask> {
  committed(entry: E, starts: boolean): void;
  rolledBack(entry: E): void;
}

const ignore = (): void => undefined;

/**
 * A task admitted inside a producer's transaction: settled once, by that transaction's commit (the
 * task is durable and may start) or rollback (undone); its `persisted` promise follows.
 */
export class WithinAdmission<E extends PendingTask> implements AdmittedWithin {
  readonly ok = true as const;
  readonly task: AdmittedWithin['task'];
  private settled = false;
  private resolve!: () => void;
  private reject!: (err: Error) => void;

  constructor(
    private readonly entry: E,
    private readonly starts: boolean,
    private readonly outcome: WithinOutcome<E>,
    /** The secret input values written in the same transaction: readable once it committed. */
    private readonly seal?: KeptSeal,
  ) {
    const r = entry.record;
    this.task = { id: r.id, state: r.state, queued: r.state === 'queued' };
    entry.persisted = new Promise<void>((resolve, reject) => {
      this.resolve = resolve;
      this.reject = reject;
    });
    entry.persisted.catch(ignore);
  }

  committed(): void {
    if (this.settled) return;
    this.settled = true;
    this.seal?.committed();
    this.resolve();
    this.outcome.committed(this.entry, this.starts);
  }

  rolledBack(): void {
    if (this.settled) return;
    this.settled = true;
    this.reject(new Error('the transaction that held this task rolled back'));
    this.outcome.rolledBack(this.entry);
  }
}
