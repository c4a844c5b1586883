/**
 * Race-safe cancellation of one task body. The body attaches its cancellers when it can (after
 * its run exists); a kill may arrive before that. A kill runs every attached canceller, and a
 * canceller attached after a kill runs the moment it is attached, so no kill is lost.
 */
export type Canceller = () => void | Promise<void>;

export class CancelSlot {
  private readonly cancellers: Canceller[] = [];
  private killed = false;
  private readonly controller = new AbortController();

  /** Aborted when the task is killed (for bodies that prefer a signal). */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get requested(): boolean {
    return this.killed;
  }

  /** Registers a canceller; runs it now when a kill has already arrived. Returns a detach. */
  attach(fn: Canceller): () => void {
    if (this.killed) {
      void Promise.resolve()
        .then(fn)
        .catch(() => undefined);
      return () => undefined;
    }
    this.cancellers.push(fn);
    return () => {
      const i = this.cancellers.indexOf(fn);
      if (i >= 0) this.cancellers.splice(i, 1);
    };
  }

  /** Requests cancellation: runs every attached canceller once. */
  async kill(): Promise<void> {
    if (this.killed) return;
    this.killed = true;
    this.controller.abort();
    const all = this.cancellers.splice(0);
    await Promise.all(all.map((fn) => Promise.resolve().then(fn).catch(() => undefined)));
  }
}
