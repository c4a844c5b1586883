/**
 * The cancellation of one tool call without an `AbortController` per call (creating one costs
 * ≈ 10 µs on Node 20, a timer and two signal listeners a few more), and the timeouts of many
 * calls on one timer.
 *
 * A run's cancellation is a `Stop`; a `CallScope` is aborted when its run's stop aborts or when
 * its deadline passes. Code that needs a real `AbortSignal` (a `fetch`, a child process) reads
 * `signal`, made on first read and aborted with the stop; code that only needs to be told (the
 * worker manager, the runner's race, the run's calls) subscribes with `onAbort`, which costs an
 * array push.
 */

/** Told when a call is aborted: `onAbort` runs `fn` once (at once when already aborted) and returns its detach. */
export interface AbortWatch {
  readonly aborted: boolean;
  readonly reason: unknown;
  onAbort(fn: () => void): () => void;
}

interface Deadline {
  at: number;
  fire: () => void;
}

/**
 * Deadlines on one timer, armed for the earliest one. Adding a later deadline than the armed one
 * touches no timer; a removed deadline stays in the timer's future until it fires, finds nothing
 * due and re-arms for the earliest left. `now` is a monotonic clock in milliseconds.
 */
export class Deadlines {
  private readonly entries = new Set<Deadline>();
  private timer?: NodeJS.Timeout;
  private armedAt = Number.POSITIVE_INFINITY;

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Runs `fire` once `ms` have passed, unless the returned entry is removed first. */
  add(ms: number, fire: () => void): Deadline {
    const entry = { at: this.now() + ms, fire };
    this.entries.add(entry);
    if (entry.at < this.armedAt) this.arm(entry.at);
    return entry;
  }

  remove(entry: Deadline): void {
    this.entries.delete(entry);
  }

  /** Deadlines not yet fired nor removed (for tests). */
  get size(): number {
    return this.entries.size;
  }

  private arm(at: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.armedAt = at;
    // a timer's delay is at most 2^31 - 1 ms; a later deadline re-arms when that one fires
    this.timer = setTimeout(() => this.check(), Math.min(Math.max(0, Math.ceil(at - this.now())), 2 ** 31 - 1));
    this.timer.unref();
  }

  private check(): void {
    this.timer = undefined;
    this.armedAt = Number.POSITIVE_INFINITY;
    const now = this.now();
    const due: Deadline[] = [];
    for (const e of this.entries) if (e.at <= now) due.push(e);
    for (const e of due) this.entries.delete(e);
    for (const e of due) {
      try {
        e.fire();
      } catch {
        // one failing callback must not keep the others from firing
      }
    }
    let next = Number.POSITIVE_INFINITY;
    for (const e of this.entries) if (e.at < next) next = e.at;
    if (next < this.armedAt) this.arm(next);
  }
}

/** The host's call timeouts (one timer for all of them). */
export const callDeadlines = new Deadlines();

/**
 * A cancellation, told once to whoever watches it. Watchers subscribe with `onAbort` (an array
 * push); a real `AbortSignal` (for a `fetch`, a child process, a tool that reads `ctx.signal`) is
 * made only when `signal` is read, and is aborted with it (already aborted when read after it).
 */
export class Stop implements AbortWatch {
  aborted = false;
  reason: unknown;
  private controller?: AbortController;
  private listeners?: Array<() => void>;

  /** A real signal, made on first read, aborted with this stop. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  onAbort(fn: () => void): () => void {
    if (this.aborted) {
      fn();
      return () => undefined;
    }
    const listeners = this.listeners ?? [];
    this.listeners = listeners;
    listeners.push(fn);
    return () => {
      // once aborted (or forgotten) the list is being told or gone: nothing to detach from
      if (this.listeners !== listeners) return;
      const i = listeners.indexOf(fn);
      if (i >= 0) listeners.splice(i, 1);
    };
  }

  /** Aborts once (a later call changes nothing): the signal if made, then every watcher. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.stopped();
    this.controller?.abort(reason);
    const listeners = this.listeners ?? [];
    this.listeners = undefined;
    for (const fn of listeners) fn();
  }

  /** Forgets every watcher (nothing is told any more). */
  protected forget(): void {
    this.listeners = undefined;
  }

  /** Runs as the stop aborts, before its signal and watchers are told. */
  protected stopped(): void {}
}

/** The signal of `s`: itself, or the signal of a stop (made then). */
export function signalOf(s: AbortSignal | { readonly signal: AbortSignal } | undefined): AbortSignal | undefined {
  return s === undefined || s instanceof AbortSignal ? s : s.signal;
}

export class CallScope extends Stop {
  /** Aborted because its deadline passed (not by its run). */
  timedOut = false;
  private deadline?: Deadline;
  private detachRun?: () => void;
  private deadlines?: Deadlines;

  /** A call of the run whose stop is `run`, failing with a `TimeoutError` after `ms`. */
  constructor(run: AbortWatch, ms: number, deadlines: Deadlines = callDeadlines) {
    super();
    if (run.aborted) {
      this.aborted = true;
      this.reason = run.reason;
      return;
    }
    this.detachRun = run.onAbort(() => this.abort(run.reason, false));
    this.deadline = deadlines.add(ms, () => {
      this.deadline = undefined;
      this.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'), true);
    });
    this.deadlines = deadlines;
  }

  abort(reason: unknown, timedOut = false): void {
    if (this.aborted) return;
    this.timedOut = timedOut;
    super.abort(reason);
  }

  /** The call settled: its deadline and its place among its run's calls are released. */
  dispose(): void {
    this.release();
    this.forget();
  }

  protected stopped(): void {
    this.release();
  }

  private release(): void {
    if (this.deadline) this.deadlines?.remove(this.deadline);
    this.deadline = undefined;
    this.detachRun?.();
    this.detachRun = undefined;
  }
}
