import { TASK_PRIORITIES, type TaskCapacity } from '@fengyu/protocol';
import type { CapacityScope, TaskPriority } from './task-submitter';

/**
 * The background-task admission and dispatch policy, as a pure state machine: each event
 * (a submission, a body that ended, a queued task withdrawn) changes the state and returns the
 * decisions (start now, queue, refuse; which queued tasks start). No I/O; the clock is passed in.
 *
 * Rules:
 * - at most `maxRunning` bodies run; a submission that finds a free running slot starts at once,
 *   otherwise it takes a queue slot;
 * - the queue limits and reservations count queued tasks: the global queue (`maxQueued`), each
 *   owner's allowance (`ownerQueueLimit`), batch (`batchOwner` / `batchGlobal`) and batch + normal
 *   (`nonInteractiveOwner` / `nonInteractiveGlobal`), which leaves the difference for interactive
 *   work even when lower-priority producers race; a refusal names the limit that refused it;
 * - when a slot frees, owners take turns (round robin over owners with queued work) and each owner
 *   picks its next class from a bounded 4:2:1 cycle (interactive, normal, batch); a class with
 *   nothing queued passes its turn to the next class in the cycle, and an owner with nothing
 *   queued is skipped (work-conserving);
 * - FIFO within one owner-priority queue;
 * - one owner holds at most `ownerMaxRunning` running slots (default: a quarter of `maxRunning`
 *   left for the others, 12 of 16), so another owner's work — the primary owner's interactive
 *   webhook, say — finds a slot at once however long the first owner's tasks run. A slot stays
 *   idle while only capped owners wait: that is the reservation, not a lost slot.
 */

export interface QueueLimits {
  maxRunning: number;
  /** Running slots one owner may hold; the rest stay free for other owners. */
  ownerMaxRunning: number;
  maxQueued: number;
  ownerQueueLimit: number;
  batchOwner: number;
  batchGlobal: number;
  nonInteractiveOwner: number;
  nonInteractiveGlobal: number;
}

export const DEFAULT_LIMITS: Readonly<QueueLimits> = Object.freeze({
  maxRunning: 16,
  ownerMaxRunning: 12,
  maxQueued: 128,
  ownerQueueLimit: 32,
  batchOwner: 16,
  batchGlobal: 64,
  nonInteractiveOwner: 24,
  nonInteractiveGlobal: 96,
});

export const POLICY_NAME = 'owner-round-robin-weighted-priority';

/** One owner's class cycle: four interactive, two normal and one batch turn, interleaved. */
export const PRIORITY_CYCLE: readonly TaskPriority[] = Object.freeze(['interactive', 'normal', 'interactive', 'batch', 'interactive', 'normal', 'interactive'] as TaskPriority[]);

export interface QueueTask {
  id: string;
  owner: string;
  priority: TaskPriority;
}

export type Admission =
  | { kind: 'start' }
  | { kind: 'queue' }
  | { kind: 'refuse'; capacityScope: CapacityScope; capacityPriority?: 'batch' | 'normal' };

/** What every admission/dispatch policy offers (the fair queue, and simpler ones to compare with). */
export interface QueuePolicy {
  /** A submission: start it now, queue it, or refuse it. */
  submit(task: QueueTask, now: number): Admission;
  /** A running body ended (or was abandoned): frees its slot; returns the queued tasks that start now. */
  finish(id: string): QueueTask[];
  /** Removes a queued task before it starts (killed); true when it was queued. */
  withdraw(id: string): boolean;
  /** When a queued task was queued (epoch ms), or undefined when it is not queued. */
  queuedAt(id: string): number | undefined;
  isRunning(id: string): boolean;
  capacity(now: number, owner?: string): TaskCapacity;
}

interface Waiting {
  task: QueueTask;
  at: number;
}

/** A FIFO lane with O(1) push/shift (entries before `head` are consumed). */
class Lane {
  private items: Waiting[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }
  push(w: Waiting): void {
    this.items.push(w);
  }
  peek(): Waiting | undefined {
    return this.items[this.head];
  }
  shift(): Waiting | undefined {
    const w = this.items[this.head];
    if (w === undefined) return undefined;
    this.head += 1;
    if (this.head > 64 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return w;
  }
  remove(id: string): boolean {
    for (let i = this.head; i < this.items.length; i++) {
      if ((this.items[i] as Waiting).task.id === id) {
        this.items.splice(i, 1);
        return true;
      }
    }
    return false;
  }
}

interface OwnerState {
  lanes: Record<TaskPriority, Lane>;
  cursor: number;
  queued: number;
  running: number;
}

const zeroByPriority = (): Record<TaskPriority, number> => ({ interactive: 0, normal: 0, batch: 0 });

export class FairQueue implements QueuePolicy {
  readonly limits: QueueLimits;
  private readonly owners = new Map<string, OwnerState>();
  /** Owners with queued work, in turn order; `turn` is the index of the next owner served. */
  private readonly ring: string[] = [];
  private turn = 0;
  private readonly running = new Map<string, QueueTask>();
  private readonly waiting = new Map<string, Waiting>();
  private readonly queuedBy = zeroByPriority();
  private readonly runningBy = zeroByPriority();

  constructor(limits: Partial<QueueLimits> = {}) {
    this.limits = resolveLimits(limits);
  }

  /** Whether `owner` may take one more running slot. */
  private underCap(o: OwnerState | undefined): boolean {
    return (o?.running ?? 0) < this.limits.ownerMaxRunning;
  }

  private owner(id: string): OwnerState {
    let o = this.owners.get(id);
    if (!o) {
      o = { lanes: { interactive: new Lane(), normal: new Lane(), batch: new Lane() }, cursor: 0, queued: 0, running: 0 };
      this.owners.set(id, o);
    }
    return o;
  }

  private release(id: string, o: OwnerState): void {
    if (o.queued === 0 && o.running === 0) this.owners.delete(id);
  }

  /** The limit a new queued task of `priority` for `owner` would break, if any. */
  private refusal(owner: OwnerState | undefined, priority: TaskPriority): Admission | undefined {
    const L = this.limits;
    const ownQueued = owner?.queued ?? 0;
    const ownBatch = owner?.lanes.batch.length ?? 0;
    const ownNormal = owner?.lanes.normal.length ?? 0;
    if (this.waiting.size >= L.maxQueued) return { kind: 'refuse', capacityScope: 'global' };
    if (ownQueued >= L.ownerQueueLimit) return { kind: 'refuse', capacityScope: 'owner' };
    if (priority === 'batch') {
      if (ownBatch >= L.batchOwner) return { kind: 'refuse', capacityScope: 'owner-priority', capacityPriority: 'batch' };
      if (this.queuedBy.batch >= L.batchGlobal) return { kind: 'refuse', capacityScope: 'global-priority', capacityPriority: 'batch' };
    }
    if (priority !== 'interactive') {
      if (ownBatch + ownNormal >= L.nonInteractiveOwner) return { kind: 'refuse', capacityScope: 'owner-priority', capacityPriority: 'normal' };
      if (this.queuedBy.batch + this.queuedBy.normal >= L.nonInteractiveGlobal) return { kind: 'refuse', capacityScope: 'global-priority', capacityPriority: 'normal' };
    }
    return undefined;
  }

  submit(task: QueueTask, now: number): Admission {
    if (this.running.has(task.id) || this.waiting.has(task.id)) throw new Error(`task ${task.id} is already known`);
    // a free slot means no owner under its cap is waiting (fill keeps that true): start at once
    if (this.running.size < this.limits.maxRunning && this.underCap(this.owners.get(task.owner)) && !this.ring.includes(task.owner)) {
      this.startTask(task);
      return { kind: 'start' };
    }
    const refused = this.refusal(this.owners.get(task.owner), task.priority);
    if (refused) return refused;
    const o = this.owner(task.owner);
    const w = { task, at: now };
    o.lanes[task.priority].push(w);
    o.queued += 1;
    this.waiting.set(task.id, w);
    this.queuedBy[task.priority] += 1;
    if (o.queued === 1) this.ring.push(task.owner);
    return { kind: 'queue' };
  }

  /** A task already holding a running slot (state rebuilt from a shared store): counts as running. */
  adopt(task: QueueTask): void {
    if (!this.running.has(task.id) && !this.waiting.has(task.id)) this.startTask(task);
  }

  private startTask(task: QueueTask): void {
    this.running.set(task.id, task);
    this.runningBy[task.priority] += 1;
    this.owner(task.owner).running += 1;
  }

  finish(id: string): QueueTask[] {
    const task = this.running.get(id);
    if (!task) return [];
    this.running.delete(id);
    this.runningBy[task.priority] -= 1;
    const o = this.owners.get(task.owner);
    if (o) {
      o.running -= 1;
      this.release(task.owner, o);
    }
    return this.fill();
  }

  /** Starts queued tasks while running slots are free. */
  private fill(): QueueTask[] {
    const started: QueueTask[] = [];
    while (this.running.size < this.limits.maxRunning && this.waiting.size > 0) {
      const next = this.pick();
      if (!next) break;
      this.startTask(next);
      started.push(next);
    }
    return started;
  }

  /** The next queued task: the owner whose turn it is, the class its cycle names (or the next one with work). */
  private pick(): QueueTask | undefined {
    if (this.ring.length === 0) return undefined;
    if (this.turn >= this.ring.length) this.turn = 0;
    // the first owner from the turn on that is under its running cap
    let k = 0;
    while (k < this.ring.length && !this.underCap(this.owners.get(this.ring[(this.turn + k) % this.ring.length] as string))) k++;
    if (k === this.ring.length) return undefined;
    this.turn = (this.turn + k) % this.ring.length;
    const ownerId = this.ring[this.turn] as string;
    const o = this.owners.get(ownerId) as OwnerState;
    for (let k = 0; k < PRIORITY_CYCLE.length; k++) {
      const pos = (o.cursor + k) % PRIORITY_CYCLE.length;
      const p = PRIORITY_CYCLE[pos] as TaskPriority;
      const w = o.lanes[p].shift();
      if (!w) continue;
      o.cursor = (pos + 1) % PRIORITY_CYCLE.length;
      this.dequeued(ownerId, o, w);
      return w.task;
    }
    return undefined;
  }

  private dequeued(ownerId: string, o: OwnerState, w: Waiting): void {
    o.queued -= 1;
    this.waiting.delete(w.task.id);
    this.queuedBy[w.task.priority] -= 1;
    const idx = this.ring.indexOf(ownerId);
    if (o.queued === 0) {
      // Leaves the ring; the owner after it keeps its place in turn order.
      if (idx >= 0) {
        this.ring.splice(idx, 1);
        if (idx < this.turn) this.turn -= 1;
        else if (idx === this.turn && this.turn >= this.ring.length) this.turn = 0;
      }
      o.cursor = 0;
      this.release(ownerId, o);
    } else if (idx === this.turn) {
      this.turn = (this.turn + 1) % this.ring.length;
    }
  }

  withdraw(id: string): boolean {
    const w = this.waiting.get(id);
    if (!w) return false;
    const o = this.owners.get(w.task.owner) as OwnerState;
    o.lanes[w.task.priority].remove(id);
    const idx = this.ring.indexOf(w.task.owner);
    o.queued -= 1;
    this.waiting.delete(id);
    this.queuedBy[w.task.priority] -= 1;
    if (o.queued === 0 && idx >= 0) {
      this.ring.splice(idx, 1);
      if (idx < this.turn) this.turn -= 1;
      if (this.turn >= this.ring.length) this.turn = 0;
      o.cursor = 0;
    }
    this.release(w.task.owner, o);
    return true;
  }

  queuedAt(id: string): number | undefined {
    return this.waiting.get(id)?.at;
  }

  isRunning(id: string): boolean {
    return this.running.has(id);
  }

  capacity(now: number, ownerId?: string): TaskCapacity {
    const L = this.limits;
    const oldest = zeroByPriority();
    for (const o of this.owners.values()) {
      for (const p of TASK_PRIORITIES) {
        const head = o.lanes[p].peek();
        if (head) oldest[p] = Math.max(oldest[p], now - head.at);
      }
    }
    const mine = ownerId ? this.owners.get(ownerId) : undefined;
    const ownedQueued = mine?.queued ?? 0;
    const ownBatch = mine?.lanes.batch.length ?? 0;
    const ownNormal = mine?.lanes.normal.length ?? 0;
    return {
      policy: POLICY_NAME,
      maxRunning: L.maxRunning,
      ownerMaxRunning: L.ownerMaxRunning,
      running: this.running.size,
      maxQueued: L.maxQueued,
      queued: this.waiting.size,
      saturated: this.running.size >= L.maxRunning,
      activeOwners: this.owners.size,
      byPriority: {
        interactive: { running: this.runningBy.interactive, queued: this.queuedBy.interactive },
        normal: { running: this.runningBy.normal, queued: this.queuedBy.normal },
        batch: { running: this.runningBy.batch, queued: this.queuedBy.batch },
      },
      oldestQueueWaitMs: Math.max(oldest.interactive, oldest.normal, oldest.batch),
      oldestInteractiveQueueWaitMs: oldest.interactive,
      oldestNormalQueueWaitMs: oldest.normal,
      oldestBatchQueueWaitMs: oldest.batch,
      batchLimit: { owner: L.batchOwner, global: L.batchGlobal, ownerCount: ownBatch, globalCount: this.queuedBy.batch },
      nonInteractiveLimit: { owner: L.nonInteractiveOwner, global: L.nonInteractiveGlobal, ownerCount: ownBatch + ownNormal, globalCount: this.queuedBy.batch + this.queuedBy.normal },
      ownerQueueLimit: L.ownerQueueLimit,
      ownedQueued,
      ownedRunning: mine?.running ?? 0,
      ownedQueueAvailable: Math.max(0, Math.min(L.ownerQueueLimit - ownedQueued, L.maxQueued - this.waiting.size)),
      ownerSaturated: ownedQueued >= L.ownerQueueLimit,
    };
  }
}

/**
 * Limits with the defaults filled in. The per-owner running cap is as given, else `maxRunning`
 * less a quarter of it (12 of 16, 3 of 4; a host of 1–3 slots keeps them all for one owner), and
 * never more than `maxRunning`.
 */
export function resolveLimits(limits: Partial<QueueLimits> = {}): QueueLimits {
  const max = limits.maxRunning ?? DEFAULT_LIMITS.maxRunning;
  const cap = limits.ownerMaxRunning ?? max - Math.floor(max / 4);
  return { ...DEFAULT_LIMITS, ...limits, ownerMaxRunning: Math.max(1, Math.min(cap, max)) };
}
