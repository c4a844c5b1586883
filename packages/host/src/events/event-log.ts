import { type RunEvent, STREAM_END_EVENTS } from '@fengyu/protocol';
import type Database from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { type Clock, isoTime } from '../clock';
import type { CrashPoint } from '../config/crash-points';
import { type Db, dialectOf, rawOf, statement } from '../storage/database';
import { attached } from './attached';
import type { Listener, NewEvent, RawWrite, Trx } from './event-types';
import { type StoredEvent, payloadJson } from './frames';
import { GATHER_MS, GATHER_TURNS, GroupCommit, HOLD_MS } from './group-commit';
import { RecentFrames } from './recent-frames';
import { LoopTurn } from './turn';

export { payloadJson };

/**
 * The append-only run event log. Every change of a run's state is appended here in the same
 * transaction as the projection change it describes (`apply`), and published to live
 * subscribers only after the commit: a reported event is always a persisted one.
 */

type EventTables = { run_events: StoredEvent };

export type { StoredEvent };
export type { Listener, NewEvent, RawWrite, Trx } from './event-types';

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

export { GATHER_MS, GATHER_TURNS, HOLD_MS } from './group-commit';

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
    const raw = this.raw;
    if (raw) {
      const log = this;
      this.group = new GroupCommit({
        raw,
        // read at each use: the log's turns are the group's (a test host replaces them before its domains start)
        get turn() {
          return log.turn;
        },
        seqs: this.seqs,
        atomic: (work) => this.atomic(work),
        append: (r, runId, events, created) => this.appendRaw(r, runId, events, created),
        publish: (e) => this.publish(e),
        publishing: () => this.publishing > 0,
        commit: (runId, events, slow) => this.commit(runId, events, slow),
        ...(crash ? { committed: (written: readonly RunEvent[]) => this.committed(written) } : {}),
      });
    }
  }

  /** The group commit (SQLite only). */
  private readonly group?: GroupCommit;
  /** Listeners being called: a commit they make waits for the turn's end (no nested publish). */
  private publishing = 0;

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
   * Group commit (`GroupCommit.commit` on SQLite): a commit written with the other commits of its
   * turn in one transaction, or alone at once when `solo` and nothing else is going on, or (`held`)
   * possibly with later turns' commits; published only once written. Elsewhere, `commit`.
   */
  commitGrouped(runId: string, events: NewEvent[], raw: RawWrite | undefined, slow?: (trx: Trx) => Promise<void>, solo = false, held = false): Promise<RunEvent[]> {
    return this.group ? this.group.commit(runId, events, raw, slow, solo, held) : this.commit(runId, events, slow);
  }

  /** How long held commits may wait (ms): `HOLD_MS`; a test makes it long to see what a group holds. */
  get holdMs(): number {
    return this.group?.holdMs ?? HOLD_MS;
  }
  set holdMs(ms: number) {
    if (this.group) this.group.holdMs = ms;
  }

  /** Turn ends a group may wait for more commits: `GATHER_TURNS`; a test makes it 0 to see one turn's group. */
  get gatherTurns(): number {
    return this.group?.gatherTurns ?? GATHER_TURNS;
  }
  set gatherTurns(n: number) {
    if (this.group) this.group.gatherTurns = n;
  }

  /** How long (ms) a group may wait for more commits: `GATHER_MS`; a test makes it long to count turns. */
  get gatherMs(): number {
    return this.group?.gatherMs ?? GATHER_MS;
  }
  set gatherMs(ms: number) {
    if (this.group) this.group.gatherMs = ms;
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
    return this.group?.queuedByOthers(runId) ?? false;
  }

  /** Writes the queued group commits now (a shutdown does, before it records its own events). */
  flush(): void {
    this.group?.flush();
  }

  /** Publishes written events now, or after the group commits written before them. */
  private publishInOrder(written: RunEvent[]): void {
    if (this.group) this.group.publishInOrder(written);
    else for (const e of written) this.publish(e);
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

  /** The frames of the runs most recently created here, for a stream's replay (none with a shared database). */
  private readonly recent = new RecentFrames();

  /**
   * The frames (UTF-8, one buffer) and types of a run's committed events after `afterSeq` from
   * memory, the first of seq `first`, when this process holds its whole log up to the last event
   * stored (checked against the database); otherwise undefined. The bytes are a view of memory
   * that later events only append after.
   */
  recentAfter(runId: string, afterSeq: number): { first: number; types: string[]; bytes: Buffer } | undefined {
    const count = this.recent.count(runId);
    if (count === undefined) return undefined;
    // When the last seq this process gave the run (its appends number from it, as the run's one
    // writer) is the last one remembered, every event written is remembered: no read is needed.
    // A commit written and not yet published, or no such seq, asks the database.
    if (this.seqs.get(runId) !== count) {
      const top = this.prepared('select max(seq) as m from run_events where run_id = ?');
      if (!top) return undefined;
      if (Number((top.get(runId) as { m: number | null }).m ?? 0) !== count) return undefined;
    }
    return this.recent.after(runId, afterSeq);
  }

  publish(event: RunEvent): void {
    if (!this.shared) this.recent.remember(event);
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

  /** The run was let go of (another host may append to it next): its counter is read again at its next append here. */
  release(runId: string): void {
    this.seqs.delete(runId);
  }

  /** Forgets the cached sequence counter of a run no longer active (memory hygiene). */
  forget(runId: string): void {
    if (!this.listeners.has(runId)) this.seqs.delete(runId);
  }
}
