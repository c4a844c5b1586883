import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { TASK_PRIORITIES, type TaskCapacity } from '@fengyu/protocol';
import { type Admission, DEFAULT_LIMITS, FairQueue, type QueuePolicy, type QueueTask } from './fair-queue';
import type { TaskPriority } from './task-submitter';

/**
 * Properties of the fair queue, checked with fast-check on a fake clock by an observer that sees
 * only the policy's decisions. The same properties run against plain FIFO (and a newest-first
 * policy for the FIFO-per-lane property) as negative controls: they must be rejected, or the
 * properties would not be testing anything.
 */

/** A plain FIFO queue: one global queue, only the running and global queue bounds. */
class FifoPolicy implements QueuePolicy {
  private readonly queue: Array<{ task: QueueTask; at: number }> = [];
  private readonly running = new Map<string, QueueTask>();
  constructor(private readonly newestFirst = false) {}
  submit(task: QueueTask, now: number): Admission {
    if (this.running.size < DEFAULT_LIMITS.maxRunning && this.queue.length === 0) {
      this.running.set(task.id, task);
      return { kind: 'start' };
    }
    if (this.queue.length >= DEFAULT_LIMITS.maxQueued) return { kind: 'refuse', capacityScope: 'global' };
    this.queue.push({ task, at: now });
    return { kind: 'queue' };
  }
  finish(id: string): QueueTask[] {
    if (!this.running.delete(id)) return [];
    const out: QueueTask[] = [];
    while (this.running.size < DEFAULT_LIMITS.maxRunning && this.queue.length) {
      const next = (this.newestFirst ? this.queue.pop() : this.queue.shift()) as { task: QueueTask };
      this.running.set(next.task.id, next.task);
      out.push(next.task);
    }
    return out;
  }
  withdraw(id: string): boolean {
    const i = this.queue.findIndex((w) => w.task.id === id);
    if (i < 0) return false;
    this.queue.splice(i, 1);
    return true;
  }
  queuedAt(id: string): number | undefined {
    return this.queue.find((w) => w.task.id === id)?.at;
  }
  isRunning(id: string): boolean {
    return this.running.has(id);
  }
  capacity(): TaskCapacity {
    throw new Error('not used');
  }
}

type Make = () => QueuePolicy;
const fair: Make = () => new FairQueue();
const fifo: Make = () => new FifoPolicy();
const lifo: Make = () => new FifoPolicy(true);

/** Drives a policy and records what an outside observer can see. */
class Sim {
  readonly policy: QueuePolicy;
  now = 0;
  private seq = 0;
  readonly queued = new Map<string, QueueTask & { at: number }>();
  readonly running = new Map<string, QueueTask>();
  readonly started: QueueTask[] = [];
  readonly submitOrder: QueueTask[] = [];
  violations: string[] = [];

  constructor(make: Make) {
    this.policy = make();
  }

  submit(owner: string, priority: TaskPriority): { task: QueueTask; admission: Admission } {
    const task = { id: `t${this.seq++}`, owner, priority };
    const admission = this.policy.submit(task, this.now);
    if (admission.kind === 'start') {
      this.running.set(task.id, task);
      this.started.push(task);
      this.submitOrder.push(task);
    } else if (admission.kind === 'queue') {
      this.queued.set(task.id, { ...task, at: this.now });
      this.submitOrder.push(task);
    }
    this.check();
    return { task, admission };
  }

  finish(id: string): QueueTask[] {
    this.running.delete(id);
    const starts = this.policy.finish(id);
    for (const s of starts) {
      this.queued.delete(s.id);
      this.running.set(s.id, s);
      this.started.push(s);
    }
    this.check();
    return starts;
  }

  withdraw(id: string): void {
    if (this.policy.withdraw(id)) this.queued.delete(id);
    this.check();
  }

  count(pred: (t: QueueTask) => boolean): number {
    let n = 0;
    for (const t of this.queued.values()) if (pred(t)) n++;
    return n;
  }

  /** Every limit, and work conservation, as the observer sees them. */
  check(): void {
    const L = DEFAULT_LIMITS;
    const v: string[] = [];
    if (this.running.size > L.maxRunning) v.push(`running ${this.running.size}`);
    if (this.queued.size > L.maxQueued) v.push(`queued ${this.queued.size}`);
    const runningOf = (o: string) => [...this.running.values()].filter((t) => t.owner === o).length;
    // a slot may stay idle only while every owner with queued work holds its running cap
    const waitingUnderCap = [...this.queued.values()].some((t) => runningOf(t.owner) < L.ownerMaxRunning);
    if (this.running.size < L.maxRunning && waitingUnderCap) v.push('a slot is idle while work waits');
    for (const o of new Set([...this.running.values()].map((t) => t.owner))) if (runningOf(o) > L.ownerMaxRunning) v.push(`owner ${o} runs over its cap`);
    const owners = new Set([...this.queued.values()].map((t) => t.owner));
    for (const o of owners) {
      if (this.count((t) => t.owner === o) > L.ownerQueueLimit) v.push(`owner ${o} queued over its allowance`);
      if (this.count((t) => t.owner === o && t.priority === 'batch') > L.batchOwner) v.push(`owner ${o} batch over reservation`);
      if (this.count((t) => t.owner === o && t.priority !== 'interactive') > L.nonInteractiveOwner) v.push(`owner ${o} batch+normal over reservation`);
    }
    if (this.count((t) => t.priority === 'batch') > L.batchGlobal) v.push('global batch over reservation');
    if (this.count((t) => t.priority !== 'interactive') > L.nonInteractiveGlobal) v.push('global batch+normal over reservation');
    this.violations.push(...v);
  }

  /** Finishes the oldest running task (a steady service order). */
  finishOne(): QueueTask[] {
    const first = this.running.keys().next().value as string | undefined;
    return first ? this.finish(first) : [];
  }
}

const ownerArb = fc.constantFrom('a', 'b', 'c');
const prioArb = fc.constantFrom<TaskPriority>(...TASK_PRIORITIES);
const opArb = fc.oneof(
  { weight: 6, arbitrary: fc.record({ op: fc.constant('submit' as const), owner: ownerArb, priority: prioArb }) },
  { weight: 3, arbitrary: fc.record({ op: fc.constant('finish' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('withdraw' as const), pick: fc.nat() }) },
  { weight: 1, arbitrary: fc.record({ op: fc.constant('tick' as const), ms: fc.integer({ min: 1, max: 5000 }) }) },
);
type Op = { op: 'submit'; owner: string; priority: TaskPriority } | { op: 'finish'; pick: number } | { op: 'withdraw'; pick: number } | { op: 'tick'; ms: number };

function apply(sim: Sim, op: Op): void {
  if (op.op === 'submit') sim.submit(op.owner, op.priority);
  else if (op.op === 'finish') {
    const ids = [...sim.running.keys()];
    if (ids.length) sim.finish(ids[op.pick % ids.length] as string);
  } else if (op.op === 'withdraw') {
    const ids = [...sim.queued.keys()];
    if (ids.length) sim.withdraw(ids[op.pick % ids.length] as string);
  } else sim.now += op.ms;
}

// --- the properties, each a fast-check property over a policy factory ---

/** No limit is ever exceeded, under any interleaving of submissions, ends, kills and time. */
const limitsHold = (make: Make) =>
  fc.property(fc.array(opArb, { minLength: 300, maxLength: 600, size: 'max' }), (ops) => {
    const sim = new Sim(make);
    for (const op of ops) apply(sim, op as Op);
    return sim.violations.length === 0;
  });

/** Keeps every owner's three classes non-empty (sustained load), submitting in a given order. */
function topUp(sim: Sim, owners: string[], order: TaskPriority[]): void {
  for (const o of owners)
    for (const p of order) {
      for (let guard = 0; guard < 3 && sim.count((t) => t.owner === o && t.priority === p) === 0; guard++) sim.submit(o, p);
    }
}

/** Under sustained load of all classes, dispatched shares are within ±1 point of 4:2:1. */
const sharesHold = (make: Make) =>
  fc.property(
    fc.integer({ min: 1, max: 3 }),
    fc.array(fc.record({ owner: ownerArb, priority: prioArb }), { minLength: 100, maxLength: 200 }),
    fc.shuffledSubarray<TaskPriority>([...TASK_PRIORITIES], { minLength: 3, maxLength: 3 }),
    (ownerCount, prefill, order) => {
      const owners = ['a', 'b', 'c'].slice(0, ownerCount);
      const sim = new Sim(make);
      for (const s of prefill) if (owners.includes(s.owner)) sim.submit(s.owner, s.priority);
      topUp(sim, owners, order);
      const before = sim.started.length;
      const rounds = 700;
      for (let i = 0; i < rounds; i++) {
        sim.finishOne();
        topUp(sim, owners, order);
      }
      const window = sim.started.slice(before, before + rounds);
      const share = (p: TaskPriority) => (100 * window.filter((t) => t.priority === p).length) / window.length;
      return Math.abs(share('interactive') - 400 / 7) <= 1 && Math.abs(share('normal') - 200 / 7) <= 1 && Math.abs(share('batch') - 100 / 7) <= 1;
    },
  );

/** With interactive work always waiting, a queued batch task starts within one 7-turn cycle per active owner. */
const batchTurnHolds = (make: Make) =>
  fc.property(fc.integer({ min: 0, max: 31 }), fc.integer({ min: 1, max: 2 }), (prefill, ownerCount) => {
    const owners = ['a', 'b'].slice(0, ownerCount);
    const sim = new Sim(make);
    for (let i = 0; i < 16; i++) sim.submit('a', 'interactive');
    for (let i = 0; i < prefill; i++) for (const o of owners) sim.submit(o, 'interactive');
    const { task, admission } = sim.submit('a', 'batch');
    if (admission.kind !== 'queue') return true;
    for (let i = 0; i < 7 * ownerCount; i++) {
      if (sim.finishOne().some((t) => t.id === task.id)) return true;
      for (const o of owners) if (sim.count((t) => t.owner === o && t.priority === 'interactive') < 8) sim.submit(o, 'interactive');
    }
    return false;
  });

/** Within one owner-priority queue, tasks start in submission order. */
const fifoPerLaneHolds = (make: Make) =>
  fc.property(fc.array(opArb, { minLength: 200, maxLength: 400, size: 'max' }), (ops) => {
    const sim = new Sim(make);
    const withdrawn = new Set<string>();
    for (const op of ops as Op[]) {
      if (op.op === 'withdraw') {
        const ids = [...sim.queued.keys()];
        if (ids.length) withdrawn.add(ids[op.pick % ids.length] as string);
      }
      apply(sim, op);
    }
    while (sim.running.size) sim.finishOne();
    for (const o of ['a', 'b', 'c'])
      for (const p of TASK_PRIORITIES) {
        const expected = sim.submitOrder.filter((t) => t.owner === o && t.priority === p && !withdrawn.has(t.id)).map((t) => t.id);
        const actual = sim.started.filter((t) => t.owner === o && t.priority === p).map((t) => t.id);
        if (expected.join() !== actual.join()) return false;
      }
    return true;
  });

/** A second owner's task starts within two dispatches even when the first owner keeps the queue full. */
const noStarvationHolds = (make: Make) =>
  fc.property(fc.array(prioArb, { minLength: 16, maxLength: 160 }), prioArb, (flood, mine) => {
    const sim = new Sim(make);
    for (const p of flood) sim.submit('a', p);
    const { task, admission } = sim.submit('b', mine);
    if (admission.kind === 'start') return true;
    if (admission.kind === 'refuse') return false;
    for (let i = 0; i < 2; i++) {
      if (sim.finishOne().some((t) => t.id === task.id)) return true;
      sim.submit('a', 'interactive');
    }
    return false;
  });

/**
 * Running slots stay reserved for other owners: whatever owner `a` submits, ends or withdraws,
 * the first submission of owner `b` (any class) starts at once.
 */
const reservedSlotsHold = (make: Make) =>
  fc.property(fc.array(opArb.filter((o) => o.op !== 'submit' || o.owner === 'a'), { minLength: 20, maxLength: 200 }), prioArb, (ops, mine) => {
    const sim = new Sim(make);
    for (let i = 0; i < 20; i++) sim.submit('a', 'batch');
    for (const op of ops) apply(sim, op as Op);
    return sim.submit('b', mine).admission.kind === 'start';
  });

const run = (p: fc.IProperty<unknown[]>, numRuns = 100) => fc.check(p, { numRuns, seed: 1405 }) as fc.RunDetails<unknown[]>;

describe('fair queue properties', () => {
  it('never exceeds a limit and never idles a slot while work waits', () => {
    fc.assert(limitsHold(fair), { numRuns: 200 });
  });
  it('keeps class shares within ±1 point of 4:2:1 under sustained load of all classes', () => {
    fc.assert(sharesHold(fair), { numRuns: 60 });
  });
  it('guarantees a batch turn under sustained interactive load', () => {
    fc.assert(batchTurnHolds(fair), { numRuns: 100 });
  });
  it('keeps FIFO within each owner-priority queue', () => {
    fc.assert(fifoPerLaneHolds(fair), { numRuns: 150 });
  });
  it('does not starve a second owner', () => {
    fc.assert(noStarvationHolds(fair), { numRuns: 100 });
  });
  it('keeps running slots for another owner however the first floods (a per-owner running cap)', () => {
    fc.assert(reservedSlotsHold(fair), { numRuns: 150 });
  });
});

describe('negative controls: the same properties reject simpler policies', () => {
  it('plain FIFO exceeds the owner allowance and reservations', () => {
    expect(run(limitsHold(fifo)).failed).toBe(true);
  });
  it('plain FIFO does not keep 4:2:1 shares', () => {
    expect(run(sharesHold(fifo), 30).failed).toBe(true);
  });
  it('plain FIFO gives no batch turn under interactive load', () => {
    expect(run(batchTurnHolds(fifo)).failed).toBe(true);
  });
  it('plain FIFO starves a second owner behind a flood', () => {
    expect(run(noStarvationHolds(fifo)).failed).toBe(true);
  });
  it('plain FIFO lets one owner hold every running slot', () => {
    expect(run(reservedSlotsHold(fifo)).failed).toBe(true);
  });
  it('newest-first breaks FIFO within an owner-priority queue', () => {
    expect(run(fifoPerLaneHolds(lifo)).failed).toBe(true);
  });
});

describe('fair queue decisions', () => {
  const fill = (q: FairQueue, n: number, owner = 'x', priority: TaskPriority = 'interactive') => {
    for (let i = 0; i < n; i++) q.submit({ id: `${owner}-${priority}-${Math.random()}`, owner, priority }, 0);
  };

  it('starts at once while a slot is free and the owner is under its cap, then queues', () => {
    const q = new FairQueue();
    for (let i = 0; i < 12; i++) expect(q.submit({ id: `r${i}`, owner: 'o', priority: 'batch' }, 0)).toEqual({ kind: 'start' });
    expect(q.submit({ id: 'q', owner: 'o', priority: 'batch' }, 0)).toEqual({ kind: 'queue' });
    // four slots stay for everyone else: the primary owner's interactive webhook starts at once
    for (let i = 0; i < 4; i++) expect(q.submit({ id: `p${i}`, owner: 'primary', priority: 'interactive' }, 0)).toEqual({ kind: 'start' });
    expect(q.submit({ id: 'p4', owner: 'primary', priority: 'interactive' }, 0)).toEqual({ kind: 'queue' });
    expect(q.capacity(0, 'o')).toMatchObject({ running: 16, ownerMaxRunning: 12, ownedRunning: 12 });
    // once slots are contended, owners under their cap take turns (o queued first)
    expect(q.finish('r0').map((t) => t.id)).toEqual(['q']);
    expect(q.finish('p0').map((t) => t.id)).toEqual(['p4']);
    // a capped owner never takes a slot freed by another owner
    expect(q.submit({ id: 'q2', owner: 'o', priority: 'interactive' }, 0)).toEqual({ kind: 'queue' });
    expect(q.finish('p1')).toEqual([]);
    expect(q.capacity(0)).toMatchObject({ running: 15, queued: 1 });
  });

  it('derives the cap from maxRunning (a quarter left for others) and keeps small hosts whole', () => {
    expect(new FairQueue().limits.ownerMaxRunning).toBe(12);
    expect(new FairQueue({ maxRunning: 8 }).limits.ownerMaxRunning).toBe(6);
    expect(new FairQueue({ maxRunning: 2 }).limits.ownerMaxRunning).toBe(2);
    expect(new FairQueue({ maxRunning: 4, ownerMaxRunning: 9 }).limits.ownerMaxRunning).toBe(4);
  });

  it('names the limit that refused: owner, owner-priority (batch, normal), global, global-priority', () => {
    const q = new FairQueue({ ownerMaxRunning: 16 });
    fill(q, 16); // running
    fill(q, 16, 'o', 'batch');
    expect(q.submit({ id: 'b17', owner: 'o', priority: 'batch' }, 0)).toEqual({ kind: 'refuse', capacityScope: 'owner-priority', capacityPriority: 'batch' });
    fill(q, 8, 'o', 'normal');
    expect(q.submit({ id: 'n9', owner: 'o', priority: 'normal' }, 0)).toEqual({ kind: 'refuse', capacityScope: 'owner-priority', capacityPriority: 'normal' });
    fill(q, 8, 'o', 'interactive');
    expect(q.submit({ id: 'i9', owner: 'o', priority: 'interactive' }, 0)).toEqual({ kind: 'refuse', capacityScope: 'owner' });
    for (const o of ['p', 'q', 'r']) fill(q, 16, o, 'batch');
    expect(q.submit({ id: 'gb', owner: 's', priority: 'batch' }, 0)).toEqual({ kind: 'refuse', capacityScope: 'global-priority', capacityPriority: 'batch' });
    for (const o of ['p', 'q', 'r']) fill(q, 8, o, 'normal');
    expect(q.submit({ id: 'gn', owner: 's', priority: 'normal' }, 0)).toEqual({ kind: 'refuse', capacityScope: 'global-priority', capacityPriority: 'normal' });
    fill(q, 32, 's', 'interactive');
    expect(q.capacity(0).queued).toBe(128);
    expect(q.submit({ id: 'g', owner: 't', priority: 'interactive' }, 0)).toEqual({ kind: 'refuse', capacityScope: 'global' });
  });

  it('reports capacity on the fake clock, with the caller’s own figures only', () => {
    const q = new FairQueue({ ownerMaxRunning: 16 });
    fill(q, 16, 'x');
    q.submit({ id: 'n1', owner: 'me', priority: 'normal' }, 1000);
    q.submit({ id: 'b1', owner: 'other', priority: 'batch' }, 4000);
    const c = q.capacity(10_000, 'me');
    expect(c).toMatchObject({
      policy: 'owner-round-robin-weighted-priority',
      running: 16,
      queued: 2,
      saturated: true,
      activeOwners: 3,
      oldestQueueWaitMs: 9000,
      oldestInteractiveQueueWaitMs: 0,
      oldestNormalQueueWaitMs: 9000,
      oldestBatchQueueWaitMs: 6000,
      batchLimit: { owner: 16, global: 64, ownerCount: 0, globalCount: 1 },
      nonInteractiveLimit: { owner: 24, global: 96, ownerCount: 1, globalCount: 2 },
      ownedQueued: 1,
      ownedRunning: 0,
      ownedQueueAvailable: 31,
      ownerSaturated: false,
    });
    expect(q.withdraw('n1')).toBe(true);
    expect(q.capacity(10_000, 'me')).toMatchObject({ queued: 1, ownedQueued: 0, activeOwners: 2, oldestNormalQueueWaitMs: 0 });
  });
});
