import type { EventLog, Trx } from '../events/event-log';
import type { ActiveRun } from './run-executor';
import type { RunRepository } from './run.repository';

/** Writes a run's release (`release`: false when it no longer waits) with the caller's change, in one transaction; true when committed. */
export type ReleaseCommit = (release: (trx: Trx) => Promise<boolean>) => Promise<boolean>;

/**
 * Letting go of live runs on a shared database (docs/inbox.md): a run that only waits at its gate
 * (`waitsOnlyAtGate`) is released — its row names no host — in the transaction in which its
 * background task gives its slot back; once that commits, the run stops here without writing, as
 * at a host stop: its item stays pending, and an answer on any host continues it (the parked
 * path, which claims it once). While a release is under way, this host's answers, expiries and
 * cancels of the run wait for it (`settled`), then find it live here or let go of.
 */
export class RunReleases {
  private readonly going = new Map<string, Promise<unknown>>();
  private readonly released = new WeakSet<ActiveRun>();

  constructor(private readonly deps: { repo: RunRepository; events: EventLog; hostId?: string }) {}

  /** Resolves once no release of the run is under way. */
  async settled(runId: string): Promise<void> {
    await this.going.get(runId);
  }

  /** Every release under way has ended (a host stop). */
  async all(): Promise<void> {
    await Promise.all(this.going.values());
  }

  /** True for a run let go of: it stopped here without ending (its row and item live on). */
  has(run: ActiveRun): boolean {
    return this.released.has(run);
  }

  /** Lets go of `run`, tracked in `active`; false when it was not let go of (it goes on here). */
  letGo(run: ActiveRun, active: Map<string, ActiveRun>, commit: ReleaseCommit): Promise<boolean> {
    const { repo, events, hostId } = this.deps;
    const id = run.id;
    if (!hostId || this.going.has(id) || !run.waitsOnlyAtGate()) return Promise.resolve(false);
    const going = commit((trx) => repo.releaseWaiting(id, hostId, trx))
      .then((released) => {
        if (!released || active.get(id) !== run) return released;
        active.delete(id);
        this.released.add(run);
        // another host may append to its log next
        events.release(id);
        run.shutdown();
        return true;
      })
      .finally(() => this.going.delete(id));
    this.going.set(id, going.catch(() => false));
    return going;
  }
}
