import { type RunEvent, type RunEventPayloads, type RunEventType, STREAM_END_EVENTS } from '@fengyu/protocol';
import type Database from 'better-sqlite3';
import type { Kysely, Transaction } from 'kysely';
import { type Clock, isoTime } from '../clock';
import type { CrashPoint } from '../config/crash-points';
import { type Db, dialectOf, rawOf, statement } from '../storage/database';
import { performance } from 'node:perf_hooks';
import { attached } from './attached';
import { type StoredEvent, frame, frameSize, payloadJson, runPieceBytes, writeFrame } from './frames';
import { LoopTurn } from './turn';

export { payloadJson };

/**
 * The append-only run event log. Every change of a run's state is appended here in the same
 * transaction as the projection change it describes (`apply`), and published to live
 * subscribers only after the commit: a reported event is always a persisted one.
 */

type EventTables = { run_events: StoredEvent };

export type { StoredEvent };

export type NewEvent = { [T in RunEventType]: { type: T } & RunEventPayloads[T] }[RunEventType];

export type Listener = (event: RunEvent) => void;

// biome-ignore lint/suspicious/noExplicitAny: projections touch tables of several domains
export type Trx = Transaction<any>;

/**
 * A projection change written through prepared statements. `creates`: it inserts the run's row, so
 * the run has no event before this commit's (a stored event references its run's row, and the
 * insert fails on an existing id). `fold`: this change and a later one of its run, queued in the
 * same group commit, as one change writing each row once with its last values (undefined when
 * the two do not fold). A change with `fold` writes only rows of its own run: the group writes the
 * folded change where the first one was, before the later one's events, and nothing for the later
 * one; a group that fails is written again commit by commit, each change unfolded.
 */
export type RawWrite = ((db: Database.Database) => void) & { creates?: true; fold?: (later: RawWrite) => RawWrite | undefined };

interface Queued {
  runId: string;
  events: NewEvent[];
  raw?: RawWrite;
  slow?: (trx: Trx) => Promise<void>;
  resolve: (written: RunEvent[]) => void;
  reject: (err: unknown) => void;
}

/**
 * The payload's JSON text of a new event, made by its caller from parts it had already serialized
 * (a step's result): written instead of a second JSON.stringify of the same payload. It must be
 * the JSON of the event without `type`, and hold no envelope key. Attached to the event (see `attached`).
 */
export const presetJson = attached<NewEvent, string>();

/** Whether a payload holds none of the envelope's keys (`type`, `runId`, `seq`, `ts`); no closure per call. */
/** The most event rows one insert statement writes (a commit's events: 1–3 for most). */
const EVENT_ROWS = 8;
const EVENT_INSERTS = Array.from({ length: EVENT_ROWS }, (_, i) => `insert into run_events (run_id, seq, type, data, ts) values ${Array.from({ length: i + 1 }, () => '(?, ?, ?, ?, ?)').join(', ')}`);

/** Inserts the event rows whose values (five per row, in column order) `values` holds, and empties it. */
function insertEvents(raw: Database.Database, values: unknown[]): void {
  statement(raw, EVENT_INSERTS[values.length / 5 - 1] as string).run(...values);
  values.length = 0;
}

const keepsEnvelope = (payload: object) => !(Object.hasOwn(payload, 'type') || Object.hasOwn(payload, 'runId') || Object.hasOwn(payload, 'seq') || Object.hasOwn(payload, 'ts'));

/**
 * The written event: the new event's fields, then its run, seq and timestamp (the same object as
 * `{ ...e, runId, seq, ts }`). The three are stored into a copy rather than defined in the spread's
 * literal: events come in many shapes, and a literal's definitions after a spread of one of them
 * leave V8's inline cache for its runtime on every event (≈ 5× the cost of the copy and stores).
 */
function envelope(e: NewEvent, runId: string, seq: number, ts: string): RunEvent {
  const written: { runId?: string; seq?: number; ts?: string } = { ...(e as object) };
  written.runId = runId;
  written.seq = seq;
  written.ts = ts;
  return written as RunEvent;
}

/**
 * Bounds of the committed events kept in memory for a stream's replay: the runs most recently
 * created here, their payload JSON text counted (in all, and per run).
 */
const RECENT_RUNS = 16;
const RECENT_BYTES = 1024 * 1024;
const RECENT_RUN_BYTES = 256 * 1024;
/** A run's first buffer of frames (a 1-step run's whole log fits; it doubles as events come). */
const RECENT_FIRST_BYTES = 4 * 1024;

interface RecentRun {
  types: string[];
  /** The offset in `buf` where each event's frame ends. */
  ends: number[];
  buf: Buffer;
  /** Bytes of `buf` in use. */
  bytes: number;
  /** The run's piece of its frames (`runPieceBytes`). */
  run: Buffer;
}

/**
 * How long a held commit (see `commitGrouped`) may wait for the commits of later turns: a serial
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

/** How often a shared database is read for events other processes appended to watched runs. */
const REMOTE_POLL_MS = 100;
/** A hole in a run's sequence read from a shared database is waited for this long, then skipped. */
const GAP_WAIT_MS = 2_000;

export class EventLog {
  private readonly db: Kysely<EventTables>;
  private readonly raw?: Database.Database;
  private readonly seqs = new Map<string, number>();
  private readonly listeners = new Map<string, Set<Listener>>();
  /**
   * With a shared database (several host processes), the last seq delivered to this process's
   * listeners per watched run (-1: not read yet), and the commits of a run in flight here (one
   * at a time, so this process publishes a run's events in sequence order).
   */
  private readonly shared?: { delivered: Map<string, number>; gaps: Map<string, number>; chains: Map<string, Promise<unknown>>; timer?: NodeJS.Timeout };

  constructor(
    db: Db,
    private readonly clock: Clock,
    /** The turns of the event loop the group commit and the runner's slices follow. */
    readonly turn: LoopTurn = new LoopTurn(),
    /** Crash tests (docs/reliability.md): `run-event-append`, `step-commit`, `run-finish`; undefined otherwise. */
    private readonly crash?: CrashPoint,
  ) {
    this.db = db.withTables<EventTables>();
    if (dialectOf(db) === 'postgres') this.shared = { delivered: new Map(), gaps: new Map(), chains: new Map() };
    this.raw = rawOf(db);
    this.transaction = this.raw?.transaction((work: () => unknown) => work());
  }

  /**
   * `work` in one SQLite transaction (a savepoint inside an open one), rolled back when it throws.
   * The transaction function is made once: better-sqlite3 builds four wrappers and their
   * properties on every `transaction()` call (≈ 15k instructions), which a commit per turn paid.
   */
  private readonly transaction?: (work: () => unknown) => unknown;

  private atomic<T>(work: () => T): T {
    return (this.transaction as (work: () => unknown) => unknown)(work) as T;
  }

  /**
   * The same commit as `commit`, as one synchronous SQLite transaction of prepared statements
   * (`apply` writes the projection through the raw handle). Returns undefined and writes nothing
   * when the database is not SQLite or a Kysely transaction is open: the caller then uses `commit`.
   */
  commitFast(runId: string, events: NewEvent[], apply?: (raw: Database.Database) => void): RunEvent[] | undefined {
    const raw = this.raw;
    if (!raw || raw.inTransaction) return undefined;
    const written = this.atomic(() => {
      apply?.(raw);
      return this.appendRaw(raw, runId, events);
    });
    if (this.crash) this.committed(written);
    this.publishInOrder(written);
    return written;
  }

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
  commitGrouped(runId: string, events: NewEvent[], raw: RawWrite | undefined, slow?: (trx: Trx) => Promise<void>, solo = false, held = false): Promise<RunEvent[]> {
    if (!this.raw) return this.commit(runId, events, slow);
    if (solo && !held && this.queued.length === 0 && this.publishing === 0 && !this.unpublished && (this.turnRun === undefined || this.turnRun === runId) && this.fastFits(runId, raw, slow)) {
      if (this.turnRun === undefined) {
        this.turnRun = runId;
        this.turn.atEnd(this.endTurn);
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
        this.turn.atEnd(this.atTurnEnd);
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
    this.turn.atEnd(this.atTurnEnd);
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
  /** Listeners being called: a commit they make waits for the turn's end (no nested publish). */
  private publishing = 0;

  /** Whether a commit can be written now through prepared statements (else it goes through Kysely). */
  private fastFits(runId: string, raw: unknown, slow: unknown): boolean {
    return !(this.raw as Database.Database).inTransaction && !this.slowRuns.has(runId) && !(!raw && slow);
  }

  /** One commit in its own transaction, published after it; the promise says how it went. */
  private writeAlone(item: Queued): Promise<RunEvent[]> {
    const raw = this.raw as Database.Database;
    const seq = this.seqs.get(item.runId);
    let written: RunEvent[];
    try {
      written = this.atomic(() => this.writeRaw(raw, item));
    } catch (err) {
      seq === undefined ? this.seqs.delete(item.runId) : this.seqs.set(item.runId, seq);
      return Promise.reject(err);
    }
    if (this.crash) this.committed(written);
    for (const e of written) this.publish(e);
    return Promise.resolve(written);
  }

  /**
   * Whether a commit queued now is written at the end of this turn with the commits queued after
   * it, in one SQLite transaction of prepared statements (not on PostgreSQL, nor while a Kysely
   * transaction holds the connection).
   */
  groupsTurn(): boolean {
    return this.raw !== undefined && !this.raw.inTransaction;
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
    const raw = this.raw as Database.Database;
    const fast: Queued[] = [];
    for (const item of items) {
      if (raw.inTransaction || this.slowRuns.has(item.runId) || (!item.raw && item.slow)) this.slowCommit(item);
      else fast.push(item);
    }
    if (fast.length === 0) return;
    let written: RunEvent[][] | undefined;
    const seqs = new Map<string, number | undefined>();
    for (const item of fast) if (!seqs.has(item.runId)) seqs.set(item.runId, this.seqs.get(item.runId));
    try {
      written = this.atomic(() => this.writeGroup(raw, fast));
    } catch {
      // one of them failed: the whole group rolled back; write each alone so only it fails
      for (const [runId, seq] of seqs) seq === undefined ? this.seqs.delete(runId) : this.seqs.set(runId, seq);
    }
    if (written) {
      const done = written;
      if (this.crash) for (const events of done) this.committed(events);
      for (const item of fast) this.untold.add(item.runId);
      return this.afterWrite(() => {
        for (const events of done) for (const e of events) this.publish(e);
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
        one = this.atomic(() => this.writeRaw(raw, item));
        if (this.crash) this.committed(one);
      } catch (err) {
        failed.set(item.runId, err);
        item.reject(err);
        continue;
      }
      this.untold.add(item.runId);
      settle.push(() => {
        for (const e of one) this.publish(e);
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
  private publishInOrder(written: RunEvent[]): void {
    if (this.unpublished) this.unpublished.push(() => written.forEach((e) => this.publish(e)));
    else for (const e of written) this.publish(e);
  }

  private writeRaw(raw: Database.Database, item: Queued): RunEvent[] {
    item.raw?.(raw);
    return this.appendRaw(raw, item.runId, item.events, item.raw?.creates);
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
      return this.appendRaw(raw, item.runId, item.events, item.raw?.creates);
    });
  }

  private slowCommit(item: Queued): void {
    const { runId } = item;
    this.slowRuns.set(runId, (this.slowRuns.get(runId) ?? 0) + 1);
    this.commit(runId, item.events, item.slow)
      .then(item.resolve, item.reject)
      .finally(() => {
        const n = (this.slowRuns.get(runId) ?? 1) - 1;
        if (n > 0) this.slowRuns.set(runId, n);
        else this.slowRuns.delete(runId);
      });
  }

  /** `created`: the run's row was inserted by this commit (its log is empty: nothing to read). */
  private appendRaw(raw: Database.Database, runId: string, events: NewEvent[], created?: true): RunEvent[] {
    if (events.length === 0) return [];
    let seq = this.seqs.get(runId) ?? (created ? 0 : Number((statement(raw, 'select max(seq) as m from run_events where run_id = ?').get(runId) as { m: number | null }).m ?? 0));
    const start = seq;
    const ts = isoTime(this.clock.now());
    const out: RunEvent[] = [];
    // the rows' values in order, written by one statement per EVENT_ROWS rows (each run of a
    // statement has its own fixed cost: binding, its program's start, its result object)
    const values: unknown[] = [];
    try {
      for (const e of events) {
        seq += 1;
        const preset = presetJson.get(e);
        let data: string;
        let framed = true;
        if (preset !== undefined) data = preset;
        else {
          const { type: _, ...payload } = e;
          data = JSON.stringify(payload);
          framed = keepsEnvelope(payload);
        }
        values.push(runId, seq, e.type, data, ts);
        if (values.length === EVENT_ROWS * 5) insertEvents(raw, values);
        const written = envelope(e, runId, seq, ts);
        if (framed) payloadJson.set(written, data);
        out.push(written);
      }
      if (values.length > 0) insertEvents(raw, values);
      this.crash?.('run-event-append');
    } catch (err) {
      this.seqs.set(runId, start);
      throw err;
    }
    this.seqs.set(runId, seq);
    return out;
  }

  /** Crash tests: the points between a commit and its publication (a step's end, a run's end). */
  private committed(written: readonly RunEvent[]): void {
    const crash = this.crash as CrashPoint;
    for (const e of written) {
      if (e.type === 'step_complete') crash('step-commit');
      else if (e.type === 'complete' || e.type === 'error' || e.type === 'cancelled') crash('run-finish');
    }
  }

  /** Appends `events` to the run's log and runs `apply` in one transaction, then publishes. */
  async commit(runId: string, events: NewEvent[], apply?: (trx: Trx) => Promise<void>): Promise<RunEvent[]> {
    const shared = this.shared;
    if (!shared) return this.commitNow(runId, events, apply);
    const before = shared.chains.get(runId) ?? Promise.resolve();
    const mine = before.catch(() => {}).then(() => this.commitNow(runId, events, apply));
    shared.chains.set(runId, mine);
    try {
      return await mine;
    } finally {
      if (shared.chains.get(runId) === mine) shared.chains.delete(runId);
    }
  }

  private async commitNow(runId: string, events: NewEvent[], apply?: (trx: Trx) => Promise<void>): Promise<RunEvent[]> {
    const written = await this.db.transaction().execute(async (trx) => {
      if (apply) await apply(trx as Trx);
      return this.appendIn(trx as Trx, runId, events);
    });
    if (this.crash) this.committed(written);
    this.publishInOrder(written);
    return written;
  }

  /** Appends inside a caller's transaction; the caller must call `publish` after committing. */
  async appendIn(trx: Trx, runId: string, events: NewEvent[]): Promise<RunEvent[]> {
    if (events.length === 0) return [];
    let seq = this.seqs.get(runId) ?? (await this.loadSeq(trx, runId));
    const start = seq;
    const ts = isoTime(this.clock.now());
    const rows = events.map((e) => {
      seq += 1;
      const { type, ...payload } = e;
      return { run_id: runId, seq, type, data: JSON.stringify(payload), ts };
    });
    this.seqs.set(runId, seq);
    try {
      await trx.insertInto('run_events').values(rows).execute();
      this.crash?.('run-event-append');
    } catch (err) {
      this.seqs.set(runId, start);
      throw err;
    }
    return rows.map((r, i) => ({ ...(events[i] as object), runId, seq: r.seq, ts } as RunEvent));
  }

  private async loadSeq(trx: Trx, runId: string): Promise<number> {
    const row = await trx.selectFrom('run_events').select((eb) => eb.fn.max('seq').as('m')).where('run_id', '=', runId).executeTakeFirst();
    return Number(row?.m ?? 0);
  }

  /** A prepared read on SQLite while no Kysely transaction is open (it would see that one's writes). */
  private prepared(text: string): Database.Statement | undefined {
    const raw = this.raw;
    return raw && !raw.inTransaction ? statement(raw, text) : undefined;
  }

  /**
   * The SSE frames of the committed events of the runs most recently created in this process,
   * each the run's whole log from seq 1 in order (a stream's replay sends them instead of reading
   * the database). The frames are kept as UTF-8 bytes in one buffer per run (outside the V8 heap),
   * with each event's type and the offset where its frame ends: a young-generation collection
   * copies none of it, and the event objects and frame strings die young. A run leaves it when an
   * event would break that (a gap) or exceed the bounds; never kept with a shared database (other
   * processes append to it).
   */
  private readonly recent = new Map<string, RecentRun>();
  private recentBytes = 0;

  private remember(e: RunEvent): void {
    if (this.shared) return;
    let entry = this.recent.get(e.runId);
    if (!entry) {
      if (e.seq !== 1) return;
      entry = { types: [], ends: [], buf: Buffer.allocUnsafe(RECENT_FIRST_BYTES), bytes: 0, run: runPieceBytes(e.runId) };
      this.recent.set(e.runId, entry);
    } else if (e.seq !== entry.types.length + 1) {
      this.dropRecent(e.runId, entry);
      return;
    }
    // the frame's bytes are written from its pieces; its text is made only when it has no stored payload text
    const measured = frameSize(e, entry.run);
    const text = measured === undefined ? frame(e) : undefined;
    const size = measured ?? Buffer.byteLength(text as string);
    if (entry.bytes + size > RECENT_RUN_BYTES) {
      this.dropRecent(e.runId, entry);
      return;
    }
    if (entry.bytes + size > entry.buf.length) {
      const grown = Buffer.allocUnsafe(Math.min(RECENT_RUN_BYTES, Math.max(entry.buf.length * 2, entry.bytes + size)));
      entry.buf.copy(grown, 0, 0, entry.bytes);
      entry.buf = grown;
    }
    if (text === undefined) writeFrame(e, entry.run, entry.buf, entry.bytes);
    else entry.buf.write(text, entry.bytes, 'utf8');
    entry.bytes += size;
    entry.types.push(e.type);
    entry.ends.push(entry.bytes);
    this.recentBytes += size;
    for (const [runId, oldest] of this.recent) {
      if (this.recent.size <= RECENT_RUNS && this.recentBytes <= RECENT_BYTES) break;
      this.dropRecent(runId, oldest);
    }
  }

  private dropRecent(runId: string, entry: RecentRun): void {
    this.recent.delete(runId);
    this.recentBytes -= entry.bytes;
  }

  /**
   * The frames (UTF-8, one buffer) and types of a run's committed events after `afterSeq` from
   * memory, the first of seq `first`, when this process holds its whole log up to the last event
   * stored (checked against the database); otherwise undefined. The bytes are a view of memory
   * that later events only append after.
   */
  recentAfter(runId: string, afterSeq: number): { first: number; types: string[]; bytes: Buffer } | undefined {
    const entry = this.recent.get(runId);
    if (!entry) return undefined;
    // When the last seq this process gave the run (its appends number from it, as the run's one
    // writer) is the last one remembered, every event written is remembered: no read is needed.
    // A commit written and not yet published, or no such seq, asks the database.
    if (this.seqs.get(runId) !== entry.types.length) {
      const top = this.prepared('select max(seq) as m from run_events where run_id = ?');
      if (!top) return undefined;
      if (Number((top.get(runId) as { m: number | null }).m ?? 0) !== entry.types.length) return undefined;
    }
    const from = Math.max(0, Math.min(afterSeq, entry.types.length));
    return { first: from + 1, types: entry.types.slice(from), bytes: entry.buf.subarray(from === 0 ? 0 : entry.ends[from - 1], entry.bytes) };
  }

  publish(event: RunEvent): void {
    this.remember(event);
    const set = this.listeners.get(event.runId);
    if (!set) return;
    const delivered = this.shared?.delivered;
    if (delivered) {
      // the same event may arrive from this process's commit and from the shared log: once each
      if (event.seq <= (delivered.get(event.runId) ?? 0)) return;
      delivered.set(event.runId, event.seq);
      this.shared?.gaps.delete(event.runId);
    }
    this.publishing += 1;
    try {
      for (const l of [...set]) {
        try {
          l(event);
        } catch {
          // a failing subscriber never affects the run or other subscribers
        }
      }
    } finally {
      this.publishing -= 1;
    }
  }

  async read(runId: string, afterSeq = 0, limit = 10_000): Promise<RunEvent[]> {
    const rows = await this.readRows(runId, afterSeq, limit);
    return rows.map((r) => {
      const payload = JSON.parse(r.data) as object;
      const e = { ...payload, type: r.type, runId: r.run_id, seq: r.seq, ts: r.ts } as RunEvent;
      if (keepsEnvelope(payload)) payloadJson.set(e, r.data);
      return e;
    });
  }

  /** The stored rows of a run's events after `afterSeq`, in order, their payloads as stored JSON text. */
  async readRows(runId: string, afterSeq = 0, limit = 10_000): Promise<StoredEvent[]> {
    const stmt = this.prepared('select run_id, seq, type, data, ts from run_events where run_id = ? and seq > ? order by seq limit ?');
    return stmt
      ? (stmt.all(runId, afterSeq, limit) as StoredEvent[])
      : await this.db.selectFrom('run_events').selectAll().where('run_id', '=', runId).where('seq', '>', afterSeq).orderBy('seq').limit(limit).execute();
  }

  /**
   * Whether the run has ended: its latest terminal event (`complete`, `error`, `cancelled`,
   * `interrupted`) is not followed by a `resumed` one. Events that follow the terminal one
   * (an audit line) do not reopen the run.
   */
  async finished(runId: string): Promise<{ endSeq: number; lastSeq: number } | undefined> {
    const ends: string[] = [...STREAM_END_EVENTS, 'resumed'];
    const last = this.prepared(`select type, seq from run_events where run_id = ? and type in (${ends.map(() => '?').join(', ')}) order by seq desc limit 1`);
    const top = this.prepared('select max(seq) as m from run_events where run_id = ?');
    if (last && top) {
      const row = last.get(runId, ...ends) as { type: string; seq: number } | undefined;
      if (!row || row.type === 'resumed') return undefined;
      return { endSeq: row.seq, lastSeq: Number((top.get(runId) as { m: number | null }).m ?? row.seq) };
    }
    const row = await this.db.selectFrom('run_events').select(['type', 'seq']).where('run_id', '=', runId).where('type', 'in', ends).orderBy('seq', 'desc').limit(1).executeTakeFirst();
    if (!row || row.type === 'resumed') return undefined;
    const max = await this.db.selectFrom('run_events').select((eb) => eb.fn.max('seq').as('m')).where('run_id', '=', runId).executeTakeFirst();
    return { endSeq: row.seq, lastSeq: Number(max?.m ?? row.seq) };
  }

  /**
   * Live events of a run; returns the unsubscribe function. With a shared database, events that
   * other host processes append are read from the log and delivered too, after `afterSeq` when
   * given (the subscriber's cursor; a listener may then see events it already read, and drops
   * them by seq), otherwise from the log's end at the first read.
   */
  subscribe(runId: string, listener: Listener, afterSeq?: number): () => void {
    let set = this.listeners.get(runId);
    if (!set) {
      set = new Set();
      this.listeners.set(runId, set);
    }
    set.add(listener);
    const shared = this.shared;
    if (shared) {
      const known = shared.delivered.get(runId);
      const from = afterSeq ?? this.seqs.get(runId) ?? -1;
      if (known === undefined || (from >= 0 && from < known)) shared.delivered.set(runId, known === undefined ? from : Math.min(known, from));
      this.schedulePoll();
    }
    return () => {
      set.delete(listener);
      if (set.size === 0) {
        this.listeners.delete(runId);
        shared?.delivered.delete(runId);
        shared?.gaps.delete(runId);
      }
    };
  }

  private schedulePoll(): void {
    const shared = this.shared;
    if (!shared || shared.timer || shared.delivered.size === 0) return;
    shared.timer = setTimeout(() => {
      void this.pollShared().finally(() => {
        shared.timer = undefined;
        this.schedulePoll();
      });
    }, REMOTE_POLL_MS);
    shared.timer.unref();
  }

  /** One read of the shared log per watched run: events after the delivered seq, in order. */
  private async pollShared(): Promise<void> {
    const shared = this.shared;
    if (!shared) return;
    for (const [runId, after] of [...shared.delivered]) {
      try {
        if (after < 0) {
          const row = await this.db.selectFrom('run_events').select((eb) => eb.fn.max('seq').as('m')).where('run_id', '=', runId).executeTakeFirst();
          if (shared.delivered.get(runId) === -1) shared.delivered.set(runId, Number(row?.m ?? 0));
          continue;
        }
        const page = await this.read(runId, after, 1000);
        for (const e of page) {
          const last = shared.delivered.get(runId);
          if (last === undefined) break;
          if (e.seq > last + 1) {
            // a commit with a lower seq may still be in flight: wait for it a little
            const since = shared.gaps.get(runId) ?? this.clock.now();
            shared.gaps.set(runId, since);
            if (this.clock.now() - since < GAP_WAIT_MS) break;
          }
          this.publish(e);
        }
      } catch {
        // the next poll retries; a database hiccup never reaches subscribers
      }
    }
  }

  /** Forgets the cached sequence counter of a run no longer active (memory hygiene). */
  forget(runId: string): void {
    if (!this.listeners.has(runId)) this.seqs.delete(runId);
  }
}
