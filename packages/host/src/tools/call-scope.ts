/**
 * The cancellation of one tool call without an `AbortController` per call (creating one costs
 * ≈ 10 µs on Node 20, a timer and two signal listeners a few more), and the timeouts of many
 * calls on one timer.
 *
 * A `CallScope` is aborted when its run's signal aborts or when its deadline passes. Code that
 * needs a real `AbortSignal` (a `fetch`, a child process) reads `signal`, made on first read and
 * aborted with the scope; code that only needs to be told (the worker manager, the runner's race)
 * subscribes with `onAbort`, which costs an array push. A run's signal gets one listener for all
 * of its calls, added by the first of them.
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

/** The active scopes of each run signal, aborted by that signal's one listener. */
const scopesOf = new WeakMap<AbortSignal, Set<CallScope>>();

function watchRun(run: AbortSignal, scope: CallScope): Set<CallScope> {
  let scopes = scopesOf.get(run);
  if (!scopes) {
    const set = new Set<CallScope>();
    scopes = set;
    scopesOf.set(run, set);
    run.addEventListener(
      'abort',
      () => {
        for (const s of [...set]) s.abort(run.reason, false);
        set.clear();
      },
      { once: true },
    );
  }
  scopes.add(scope);
  return scopes;
}

export class CallScope implements AbortWatch {
  aborted = false;
  reason: unknown;
  /** Aborted because its deadline passed (not by its run). */
  timedOut = false;
  private controller?: AbortController;
  private listeners?: Array<() => void>;
  private deadline?: Deadline;
  private scopes?: Set<CallScope>;
  private deadlines?: Deadlines;

  /** A call of the run whose signal is `run`, failing with a `TimeoutError` after `ms`. */
  constructor(run: AbortSignal, ms: number, deadlines: Deadlines = callDeadlines) {
    if (run.aborted) {
      this.aborted = true;
      this.reason = run.reason;
      return;
    }
    this.scopes = watchRun(run, this);
    this.deadline = deadlines.add(ms, () => {
      this.deadline = undefined;
      this.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError'), true);
    });
    this.deadlines = deadlines;
  }

  /** A real signal, made on first read, aborted with the scope. */
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
      const i = listeners.indexOf(fn);
      if (i >= 0) listeners.splice(i, 1);
    };
  }

  abort(reason: unknown, timedOut: boolean): void {
    if (this.aborted) return;
    this.aborted = true;
    this.timedOut = timedOut;
    this.reason = reason;
    this.release();
    this.controller?.abort(reason);
    const listeners = this.listeners ?? [];
    this.listeners = undefined;
    for (const fn of listeners) fn();
  }

  /** The call settled: its deadline and its place among its run's calls are released. */
  dispose(): void {
    this.release();
    this.listeners = undefined;
  }

  private release(): void {
    if (this.deadline) this.deadlines?.remove(this.deadline);
    this.deadline = undefined;
    this.scopes?.delete(this);
    this.scopes = undefined;
  }
}
