import type { Logger } from 'pino';
import type { Clock } from '../context';
import type { EndedTask, SubmitWithin, TaskSnapshot, TaskSubmitter } from '../tasks/task-submitter';
import type { WebhookRepository } from './webhook.repository';
import { type DeliveryState, deliveryStateOf, isTerminal } from './webhook-rules';

const EARLY_FINISH_LIMIT = 1000;

/**
 * A delivery's audit row follows its task to the task's end. On the single-host SQLite file the
 * rows of the tasks that ended in one turn are updated in one transaction, or inside the task's
 * own end commit; elsewhere one update per task. After a restart, `reconcile` brings open rows
 * up to date.
 */
export class DeliveryAudit {
  /** Tasks that finished before their delivery row learned the task id. */
  private readonly earlyFinish = new Map<string, TaskSnapshot>();
  /** Audit rows of ended tasks waiting for this turn's commit (single-host SQLite). */
  private finishes: Array<{ deliverySeq: number; acceptedMs: number; state: DeliveryState; completedAt: string; completedMs: number; error?: { code: string; message: string }; done(n: number): void; failed(err: unknown): void }> = [];
  private finishScheduled = false;
  /**
   * Tasks whose audit row took their end inside the task's own end commit (nothing left to
   * follow when the end is reported). Should that commit fail, neither the task's end nor the
   * audit row's is durable, and both come back interrupted after a restart.
   */
  private readonly endedWithin = new Set<string>();
  /** The delivery of each task admitted in a group, until the task ends (its audit row is found by its rowid). */
  private readonly deliveryOfTask = new Map<string, { seq: number; acceptedMs: number }>();
  private unsubscribe?: () => void;
  private unsubscribeEnd?: () => void;

  constructor(
    private readonly deps: { repo: WebhookRepository; clock: Clock; tasks: TaskSubmitter; logger: Logger },
    private readonly iso: (ms: number) => string,
  ) {}

  /** A task admitted in a group: its audit row is `seq` (found by rowid when the task ends). */
  track(taskId: string, seq: number, acceptedMs: number): void {
    if (this.deliveryOfTask.size >= 10_000) this.deliveryOfTask.clear();
    this.deliveryOfTask.set(taskId, { seq, acceptedMs });
  }

  /** A task's submission was recorded on its audit row: an end that came first is applied now. */
  async submitted(taskId: string): Promise<void> {
    const early = this.earlyFinish.get(taskId);
    if (!early) return;
    this.earlyFinish.delete(taskId);
    await this.applyFinish(early);
  }

  /** Follows every webhook task's end from now on (started twice, it still follows each task once). */
  follow(): void {
    this.unsubscribe?.();
    this.unsubscribe = this.deps.tasks.onFinished((t) => this.onTaskFinished(t));
    this.unsubscribeEnd?.();
    const tasks = this.deps.tasks as TaskSubmitter & Partial<SubmitWithin>;
    if (this.deps.repo.singleWriter && typeof tasks.onEndWithin === 'function') this.unsubscribeEnd = tasks.onEndWithin((t) => this.endWithin(t));
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribeEnd?.();
    if (this.finishes.length > 0) this.commitFinishes();
  }

  private async applyFinish(task: TaskSnapshot): Promise<number> {
    const state = deliveryStateOf(task);
    if (!isTerminal(state)) return 0;
    const finishedMs = task.finishedAt ? Date.parse(task.finishedAt) : this.deps.clock.now();
    const known = this.deliveryOfTask.get(task.id);
    if (known && this.deps.repo.singleWriter) {
      this.deliveryOfTask.delete(task.id);
      return new Promise<number>((done, failed) => {
        this.finishes.push({ deliverySeq: known.seq, acceptedMs: known.acceptedMs, state, completedAt: this.iso(finishedMs), completedMs: finishedMs, ...(task.error ? { error: task.error } : {}), done, failed });
        if (!this.finishScheduled) {
          this.finishScheduled = true;
          setImmediate(() => this.commitFinishes());
        }
      });
    }
    return this.deps.repo.finished(task.id, state, this.iso(finishedMs), finishedMs, task.error);
  }

  /** The audit rows of the tasks that ended in this turn, updated in one transaction. */
  private commitFinishes(): void {
    const group = this.deps.repo.grouped();
    if (!group) {
      // an async transaction holds the connection: try again in a moment
      setTimeout(() => this.commitFinishes(), 1);
      return;
    }
    const batch = this.finishes;
    this.finishes = [];
    this.finishScheduled = false;
    const changed: number[] = [];
    try {
      group.atomically(() => {
        for (const f of batch) changed.push(group.finishedDelivery(f.deliverySeq, f.acceptedMs, f.state, f.completedAt, f.completedMs, f.error));
      });
    } catch (err) {
      for (const f of batch) f.failed(err);
      return;
    }
    batch.forEach((f, i) => f.done(changed[i] ?? 0));
  }

  /**
   * Inside the commit that records a webhook task's end (SQLite): the audit row of a delivery
   * admitted here takes the task's end in that same commit. Anything else (a throw included) is
   * left to `onTaskFinished`.
   */
  private endWithin(task: EndedTask): void {
    if (task.kind !== 'workflow-webhook') return;
    const known = this.deliveryOfTask.get(task.id);
    const sync = this.deps.repo.within();
    if (!known || !sync) return;
    const state = deliveryStateOf({ state: task.state, queued: false });
    if (!isTerminal(state)) return;
    // whole milliseconds, as the task's reported end time
    const completedMs = Math.floor(task.finishedMs);
    sync.finishedDelivery(known.seq, known.acceptedMs, state, this.iso(completedMs), completedMs, task.error);
    this.deliveryOfTask.delete(task.id);
    if (this.endedWithin.size >= 10_000) this.endedWithin.clear();
    this.endedWithin.add(task.id);
  }

  /** Follows webhook tasks to their end (the audit row takes the task's terminal state). */
  private onTaskFinished(task: TaskSnapshot): void {
    if (task.kind !== 'workflow-webhook') return;
    if (this.endedWithin.delete(task.id)) return;
    if (this.earlyFinish.size >= EARLY_FINISH_LIMIT) {
      const oldest = this.earlyFinish.keys().next().value;
      if (oldest !== undefined) this.earlyFinish.delete(oldest);
    }
    this.earlyFinish.set(task.id, task);
    this.applyFinish(task)
      .then((n) => {
        if (n > 0) this.earlyFinish.delete(task.id);
      })
      .catch((err) => this.deps.logger.warn({ err, taskId: task.id }, 'webhook audit update failed'));
  }

  /** Brings open audit rows up to date with their tasks (after a restart, or before a listing). */
  async reconcile(triggerId?: string): Promise<void> {
    for (const open of await this.deps.repo.open(triggerId)) {
      const task = await this.deps.tasks.get(open.owner, open.task_id);
      if (!task) continue;
      if (isTerminal(deliveryStateOf(task))) await this.applyFinish(task);
      else if (deliveryStateOf(task) === 'SUBMITTED') await this.deps.repo.started(task.id);
    }
  }
}
