import { performance } from 'node:perf_hooks';

/**
 * Synchronous work (ms) after which the runner lets the event loop turn (I/O, timers, SSE writes).
 * Short enough that a subscriber who connects just after starting a fast run is served while the
 * run goes on (its later steps then stream live), long enough that a chain's steps still share
 * commits.
 */
export const SLICE_MS = 2;

/**
 * The current turn of the event loop as the code that asks sees it: a turn opens at the first
 * call made in it and ends in the loop's check phase (setImmediate), after the callback that
 * opened it and every promise continuation that callback set off. Work registered for the end of
 * a turn runs there, in registration order; work registered while it runs belongs to the next turn.
 */
export class LoopTurn {
  private open = false;
  private openedAt = 0;
  private ending: Array<() => void> = [];
  private next?: Promise<void>;
  private resume?: () => void;
  private ends = 0;

  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly sliceMs = SLICE_MS,
  ) {}

  private ensureOpen(): void {
    if (this.open) return;
    this.open = true;
    this.openedAt = this.now();
    setImmediate(this.close);
  }

  private readonly close = (): void => {
    this.open = false;
    this.ends += 1;
    const fns = this.ending;
    this.ending = [];
    const resume = this.resume;
    this.resume = undefined;
    this.next = undefined;
    for (const fn of fns) fn();
    // The callers that yielded resume after what the turn's end queued in turn (a group commit's
    // publication): the frames of a slice's steps reach their subscribers before the next slice
    // runs, not a slice later.
    if (resume) setImmediate(resume);
  };

  /** How many turns have ended: code that sees it change between two points ran in a later turn. */
  get ended(): number {
    return this.ends;
  }

  /** Runs `fn` when the current turn ends. */
  atEnd(fn: () => void): void {
    this.ensureOpen();
    this.ending.push(fn);
  }

  /**
   * Nothing while the current turn has run less than the slice; after that, a promise settled
   * after the turn's end (in the loop's next check phase, after the immediates the end's work
   * queued), the same one for every caller, so that every caller lets the loop turn together (a
   * caller that kept going would hold the loop for all the others). `now`: whatever the slice.
   */
  yieldIfLong(now = false): Promise<void> | undefined {
    this.ensureOpen();
    if (this.next) return this.next;
    if (!now && this.now() - this.openedAt < this.sliceMs) return undefined;
    const next = new Promise<void>((resolve) => {
      this.resume = resolve;
    });
    this.next = next;
    return next;
  }
}
