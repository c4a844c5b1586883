import type { RunEvent } from '@fengyu/protocol';
import type Database from 'better-sqlite3';
import { performance } from 'node:perf_hooks';
import type { NewEvent, RawWrite, Trx } from './event-types';
import type { LoopTurn } from './turn';

/**
 * The event log's group commit on SQLite: commits queued in one turn of the event loop (any run)
 * written in one transaction of prepared statements at its end, held commits waiting for later
 * turns, gathered groups while runs arrive side by side, and the publication of what was written
 * in commit order. The log numbers and stores the events (`GroupLog.append`); this decides when
 * and with what each commit is written, and when it is told.
 */

/**
 * How long a held commit (see `GroupCommit.commit`) may wait for the commits of later turns: a serial
 * chain of worker calls, each answered in a turn of its own, shares one transaction and one
 * burst of stream frames per hold instead of one per step. Half a 60 Hz display frame: a
 * subscriber's view of such a chain moves at most that late, and a commit is shared by ≈ 15–20
 * steps of ≈ 0.45 ms instead of 4–5 (the commit's WAL writes, locks and frame burst per step).
 * Only transitions of retry-safe calls that have left are held; nothing waits on them.
 */
export const HOLD_MS = 8;

/**
 * How many turns of the event loop, and how long (ms), a group commit that must be written may
 * wait for more commits while runs arrive side by side (the group holds commits of more than one
 * run, one of them creating its run): each further turn's I/O (other clients' requests) adds its
 * new runs' commits to the same transaction, whose WAL pages and lock are paid once per group. It
 * waits only while each turn brings more commits. Steps of runs already going never make it wait
 * (they wait for this very group, so a later turn would bring nothing), nor does a lone run.
 */
export const GATHER_TURNS = 8;
export const GATHER_MS = 2;

/** What the group commit needs of its event log. */
export interface GroupLog {
  readonly raw: Database.Database;
  /** The turns of the event loop the group commit follows. */
  readonly turn: LoopTurn;
  /** The last seq given to each run (restored when a transaction that numbered events rolls back). */
  readonly seqs: Map<string, number>;
  /** `work` in one SQLite transaction (a savepoint inside an open one), rolled back when it throws. */
  atomic<T>(work: () => T): T;
  /** Stores a commit's events inside the open transaction; `created`: the commit inserted the run's row. */
  append(raw: Database.Database, runId: string, events: NewEvent[], created?: true): RunEvent[];
  publish(event: RunEvent): void;
  /** Whether listeners are being called (a commit they make waits for the turn's end: no nested publish). */
  publishing(): boolean;
  /** The same commit through Kysely, in its own transaction, published after it. */
  commit(runId: string, events: NewEvent[], slow?: (trx: Trx) => Promise<void>): Promise<RunEvent[]>;
  /** Crash tests: the points between a commit and its publication; undefined otherwise. */
  readonly committed?: (written: readonly RunEvent[]) => void;
}

interface Queued {
  runId: string;
  events: NewEvent[];
  raw?: RawWrite;
  slow?: (trx: Trx) => Promise<void>;
  resolve: (written: RunEvent[]) => void;
  reject: (err: unknown) => void;
}

export class GroupCommit {
  constructor(private readonly log: GroupLog) {}

  /**
   * Group commit. A `solo` commit (its caller knows no other commit of its run is coming in this
   * turn of the event loop) is written at once, alone, when no commit is queued and no other run
   * has committed in this turn: a lone serial run never waits for a turn to end. Any other commit
   * is queued and written with every commit queued in the same turn (any run) in one SQLite
   * transaction at the end of that turn. A group's events are published, and its callers' promises
   * settled, in the next turn (`afterWrite`); a commit written alone is published at once. Commits
   * keep their queue order (a run's events keep theirs). When
   * a group fails, each commit is retried alone, so a failing one fails only its own caller and
   * the commits of its run queued after it (a run's log never skips a transition). `slow` is the same
   * change through Kysely: used when the database is not SQLite, while a Kysely transaction holds
   * the connection, for a commit with no `raw` form, and for a run's later commits while one of
   * its Kysely commits is pending.
   *
   * A `held` commit (one nothing waits on before its effect: the transitions of a read-only,
   * retry-safe call, whose call has already left) may also wait past its turn's end for the
   * commits of later turns, until `holdMs` after the oldest commit of the queue: the turn's end
   * writes the queue only when one of its commits is not held, or the oldest has waited that long;
   * otherwise a timer writes it then. Held or not, a commit is published only once written.
   */
  commit(runId: string, events: NewEvent[], raw: RawWrite | undefined, slow?: (trx: Trx) => Promise<void>, solo = false, held = false): Promise<RunEvent[]> {
    if (solo && !held && this.queued.length === 0 && !this.log.publishing() && !this.unpublished && (this.turnRun === undefined || this.turnRun === runId) && this.fastFits(runId, raw, slow)) {
      if (this.turnRun === undefined) {
        this.turnRun = runId;
        this.log.turn.atEnd(this.endTurn);
      }
      return this.writeAlone({ runId, events, raw, slow, resolve: () => {}, reject: () => {} });
    }
    return new Promise<RunEvent[]>((resolve, reject) => {
      if (this.queued.length === 0) this.queuedAt = performance.now();
      else if (!this.mixed && (this.queued[0] as Queued).runId !== runId) this.mixed = true;
      if (!this.mixed && this.turnRun !== undefined && this.turnRun !== runId) this.mixed = true;
      if (raw?.creates) this.arriving = true;
      this.queued.push({ runId, events, raw, slow, resolve, reject });
      if (!held) this.urgent = true;
      if (!this.endArmed) {
        this.endArmed = true;
        this.log.turn.atEnd(this.atTurnEnd);
      }
    });
  }

  /** When the oldest commit of the queue was queued (performance.now()). */
  private queuedAt = 0;
  /** Whether a queued commit is not held (the queue is written at the end of this turn). */
  private urgent = false;
  /** Whether the end of the current turn looks at the queue. */
  private endArmed = false;
  /** The first `carried` commits of the queue were queued in earlier turns (held since). */
  private carried = 0;
  private holdTimer?: NodeJS.Timeout;
  /** How long held commits may wait (ms): `HOLD_MS`; a test makes it long to see what a group holds. */
  holdMs = HOLD_MS;

  /** Whether commits of more than one run were queued (or one was written alone) since the last group. */
  private mixed = false;
  /** Whether a run's creating commit was queued since the last group. */
  private arriving = false;
  /** Turn ends the queue has waited for more commits (`gathers`), its length then, since when. */
  private gathered = 0;
  private gatheredLength = 0;
  private gatherStart = 0;
  /** Turn ends a group may wait for more commits: `GATHER_TURNS`; a test makes it 0 to see one turn's group. */
  gatherTurns = GATHER_TURNS;
  /** How long (ms) a group may wait for more commits: `GATHER_MS`; a test makes it long to count turns. */
  gatherMs = GATHER_MS;

  /**
   * Whether a group due now waits for the next turn's end instead: while runs arrive side by side
   * (`mixed` and `arriving`), for at most `gatherTurns` turn ends and `gatherMs`, and only as long as each
   * turn brought more commits (a quiet turn writes the group at once).
   */
  private gathers(): boolean {
    const length = this.queued.length;
    if (!this.mixed || !this.arriving || this.gathered >= this.gatherTurns) return false;
    if (this.gathered === 0) this.gatherStart = performance.now();
    else if (length === this.gatheredLength || performance.now() - this.gatherStart >= this.gatherMs) return false;
    this.gathered += 1;
    this.gatheredLength = length;
    this.endArmed = true;
    this.log.turn.atEnd(this.atTurnEnd);
    return true;
  }

  private readonly atTurnEnd = (): void => {
    this.endArmed = false;
    if (this.queued.length === 0) return;
    const left = this.holdMs - (performance.now() - this.queuedAt);
    if (this.urgent || left <= 0) return this.gathers() ? undefined : this.flushQueued();
    this.carried = this.queued.length;
    this.holdTimer ??= setTimeout(this.flushQueued, Math.ceil(left));
  };

  /** The run whose commit was written at once in the current turn (later runs' commits group). */
  private turnRun?: string;
  private readonly endTurn = (): void => {
    this.turnRun = undefined;
  };

  /** Whether a commit can be written now through prepared statements (else it goes through Kysely). */
  private fastFits(runId: string, raw: unknown, slow: unknown): boolean {
    return !this.log.raw.inTransaction && !this.slowRuns.has(runId) && !(!raw && slow);
  }

  /** One commit in its own transaction, published after it; the promise says how it went. */
  private writeAlone(item: Queued): Promise<RunEvent[]> {
    const raw = this.log.raw;
    const seq = this.log.seqs.get(item.runId);
    let written: RunEvent[];
    try {
      written = this.log.atomic(() => this.writeRaw(raw, item));
    } catch (err) {
      seq === undefined ? this.log.seqs.delete(item.runId) : this.log.seqs.set(item.runId, seq);
      return Promise.reject(err);
    }
    this.log.committed?.(written);
    for (const e of written) this.log.publish(e);
    return Promise.resolve(written);
  }

  /**
   * Whether a commit of another run than `runId` waits for its group commit: queued in this turn,
   * or written and its caller not yet told (that run takes its next step in the next turn).
   */
  queuedByOthers(runId: string): boolean {
    if (this.untold.size > (this.untold.has(runId) ? 1 : 0)) return true;
    for (let i = this.carried; i < this.queued.length; i++) if ((this.queued[i] as Queued).runId !== runId) return true;
    return false;
  }

  /** Writes the queued group commits now (a shutdown does, before it records its own events). */
  flush(): void {
    if (this.queued.length) this.flushQueued();
    if (this.unpublished) this.publishWritten();
  }

  private queued: Queued[] = [];
  /** Runs with a Kysely commit in flight (their later commits follow it through Kysely). */
  private readonly slowRuns = new Map<string, number>();

  private readonly flushQueued = (): void => {
    const items = this.queued;
    this.queued = [];
    this.urgent = false;
    this.carried = 0;
    this.mixed = false;
    this.arriving = false;
    this.gathered = 0;
    if (this.holdTimer) {
      clearTimeout(this.holdTimer);
      this.holdTimer = undefined;
    }
    const raw = this.log.raw;
    const fast: Queued[] = [];
    for (const item of items) {
      if (raw.inTransaction || this.slowRuns.has(item.runId) || (!item.raw && item.slow)) this.slowCommit(item);
      else fast.push(item);
    }
    if (fast.length === 0) return;
    let written: RunEvent[][] | undefined;
    const seqs = new Map<string, number | undefined>();
    for (const item of fast) if (!seqs.has(item.runId)) seqs.set(item.runId, this.log.seqs.get(item.runId));
    try {
      written = this.log.atomic(() => this.writeGroup(raw, fast));
    } catch {
      // one of them failed: the whole group rolled back; write each alone so only it fails
      for (const [runId, seq] of seqs) seq === undefined ? this.log.seqs.delete(runId) : this.log.seqs.set(runId, seq);
    }
    if (written) {
      const done = written;
      if (this.log.committed) for (const events of done) this.log.committed(events);
      for (const item of fast) this.untold.add(item.runId);
      return this.afterWrite(() => {
        for (const events of done) for (const e of events) this.log.publish(e);
        fast.forEach((item, i) => item.resolve(done[i] as RunEvent[]));
      });
    }
    // A run's later commits of the group follow its failed one: its log never skips a transition.
    // A failure is told at once (its run stops before its next turn); what was written, as above.
    const failed = new Map<string, unknown>();
    const settle: Array<() => void> = [];
    for (const item of fast) {
      let one: RunEvent[];
      try {
        if (failed.has(item.runId)) throw failed.get(item.runId);
        one = this.log.atomic(() => this.writeRaw(raw, item));
        this.log.committed?.(one);
      } catch (err) {
        failed.set(item.runId, err);
        item.reject(err);
        continue;
      }
      this.untold.add(item.runId);
      settle.push(() => {
        for (const e of one) this.log.publish(e);
        item.resolve(one);
      });
    }
    if (settle.length) this.afterWrite(() => settle.forEach((fn) => fn()));
  };

  /**
   * A group commit's publication and its callers' settling, in commit order: in the next turn of
   * the event loop, not in the turn of its transaction (I/O waiting meanwhile, a health check or
   * a new request, is served between the two). While one is pending, every later commit is
   * published after it (a run's events reach subscribers in order).
   */
  private unpublished?: Array<() => void>;
  /** The runs with a group commit written and its caller not yet told (`queuedByOthers`). */
  private readonly untold = new Set<string>();

  private afterWrite(fn: () => void): void {
    if (this.unpublished) return void this.unpublished.push(fn);
    this.unpublished = [fn];
    setImmediate(this.publishWritten);
  }

  private readonly publishWritten = (): void => {
    const fns = this.unpublished;
    if (!fns) return;
    // what a listener publishes meanwhile is appended, and published after what came before it
    let i = 0;
    try {
      for (; i < fns.length; i++) (fns[i] as () => void)();
    } finally {
      this.unpublished = undefined;
      this.untold.clear();
      // one that threw is not run again; the rest keep their order
      for (const fn of fns.slice(i + 1)) this.afterWrite(fn);
    }
  };

  /** Publishes written events now, or after the group commits written before them. */
  publishInOrder(written: RunEvent[]): void {
    if (this.unpublished) this.unpublished.push(() => written.forEach((e) => this.log.publish(e)));
    else for (const e of written) this.log.publish(e);
  }

  private writeRaw(raw: Database.Database, item: Queued): RunEvent[] {
    item.raw?.(raw);
    return this.log.append(raw, item.runId, item.events, item.raw?.creates);
  }

  /**
   * The commits of a group, inside its transaction, in queue order; a run's projection change that
   * folds into its earlier one of the group (`RawWrite.fold`) is written with it, where it was.
   */
  private writeGroup(raw: Database.Database, items: Queued[]): RunEvent[][] {
    const writes = items.map((item) => item.raw);
    // the position of each run's last change not folded into an earlier one
    const open = new Map<string, number>();
    items.forEach((item, i) => {
      const w = item.raw;
      if (!w) return;
      const at = open.get(item.runId);
      const folded = at === undefined ? undefined : writes[at]?.fold?.(w);
      if (folded && at !== undefined) {
        writes[at] = folded;
        writes[i] = undefined;
      } else open.set(item.runId, i);
    });
    return items.map((item, i) => {
      writes[i]?.(raw);
      return this.log.append(raw, item.runId, item.events, item.raw?.creates);
    });
  }

  private slowCommit(item: Queued): void {
    const { runId } = item;
    this.slowRuns.set(runId, (this.slowRuns.get(runId) ?? 0) + 1);
    this.log.commit(runId, item.events, item.slow)
      .then(item.resolve, item.reject)
      .finally(() => {
        const n = (this.slowRuns.get(runId) ?? 1) - 1;
        if (n > 0) this.slowRuns.set(runId, n);
        else this.slowRuns.delete(runId);
      });
  }
}
