import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import type { Db } from './database';

/**
 * Host identity and lease on a shared database. Every host process has a fresh id, writes a
 * `hosts` row and renews its lease every `beatMs`; a host whose lease ran out (`expires_ms` in the
 * past, not stopped) is dead. The sweep interrupts the live work of dead hosts only — runs and
 * tasks carry the id of the host executing them — and records the host swept once all its work
 * is interrupted, so a sweep that fails half-way is simply redone (each interruption is itself
 * conditional on the work still being live, so concurrent sweepers act once).
 */

/** Lease length and renewal period. */
export const DEFAULT_LEASE_MS = 15_000;

export interface HostRow {
  id: string;
  started_ms: number;
  heartbeat_ms: number;
  expires_ms: number;
  stopped_ms: number | null;
  swept_ms: number | null;
}

type Tables = { hosts: HostRow };

/** What a sweep does with the dead hosts' ids: interrupts their live runs and tasks. */
export type SweepWork = (hostIds: string[], options: { unowned: boolean }) => Promise<void>;

/** The lease length from the environment (`FENGYU_HOST_LEASE_MS`, at least 1 s), or the default. */
export function leaseMsFrom(env: Readonly<Record<string, string | undefined>>): number {
  const v = Number(env.FENGYU_HOST_LEASE_MS);
  return Number.isFinite(v) && v >= 1000 ? Math.floor(v) : DEFAULT_LEASE_MS;
}

export class HostLease {
  readonly id = randomUUID();
  private readonly db;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> = Promise.resolve();
  private work: SweepWork | undefined;
  private stopped = false;
  /** Set when another host swept this one (its lease had run out, e.g. a stall). */
  lost = false;

  constructor(
    db: Db,
    private readonly clock: Clock,
    private readonly logger: Logger,
    readonly leaseMs = DEFAULT_LEASE_MS,
  ) {
    this.db = db.withTables<Tables>();
  }

  get beatMs(): number {
    return Math.max(200, Math.floor(this.leaseMs / 5));
  }

  /**
   * Writes this host's row with a fresh lease and keeps renewing it from now on (a host that is
   * still starting must not look dead); sweeping starts with `start`.
   */
  async register(): Promise<void> {
    const now = this.clock.now();
    await this.db.insertInto('hosts').values({ id: this.id, started_ms: now, heartbeat_ms: now, expires_ms: now + this.leaseMs, stopped_ms: null, swept_ms: null }).execute();
    this.timer = setInterval(() => this.tick(), this.beatMs);
    this.timer.unref?.();
  }

  private tick(): void {
    this.running = this.running.then(async () => {
      if (this.stopped) return;
      try {
        if (!(await this.renew()) && !this.lost) {
          this.lost = true;
          this.logger.error({ hostId: this.id }, 'this host was swept as dead by another host (its lease ran out); its live work was interrupted');
        }
        if (!this.work) return;
        const dead = await this.sweep();
        if (dead.length) this.logger.warn({ hosts: dead }, 'interrupted the live work of hosts whose lease ran out');
      } catch (err) {
        this.logger.warn({ err }, 'host lease renewal or sweep failed');
      }
    });
  }

  /** Renews the lease; false when this host was already swept as dead. */
  async renew(): Promise<boolean> {
    const now = this.clock.now();
    const r = await this.db.updateTable('hosts').set({ heartbeat_ms: now, expires_ms: now + this.leaseMs }).where('id', '=', this.id).where('swept_ms', 'is', null).executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Hosts whose lease ran out and whose work is not yet swept. */
  async expired(): Promise<string[]> {
    const rows = await this.db.selectFrom('hosts').select('id').where('expires_ms', '<', this.clock.now()).where('swept_ms', 'is', null).where('stopped_ms', 'is', null).execute();
    return rows.map((r) => r.id).filter((id) => id !== this.id);
  }

  /**
   * Interrupts the work of dead hosts, then records them swept. `unowned`: also work that names
   * no host (written before hosts had ids) — only at start.
   */
  async sweep(unowned = false): Promise<string[]> {
    const work = this.work;
    const dead = await this.expired();
    if (!work || (dead.length === 0 && !unowned)) return dead;
    await work(dead, { unowned });
    if (dead.length) await this.db.updateTable('hosts').set({ swept_ms: this.clock.now() }).where('id', 'in', dead).where('swept_ms', 'is', null).execute();
    return dead;
  }

  /** Starts sweeping dead hosts at every renewal. */
  start(work: SweepWork): void {
    this.work = work;
  }

  /** Graceful stop (after this host interrupted its own work): no more renewals; the row says stopped. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    await this.running;
    await this.db.updateTable('hosts').set({ stopped_ms: this.clock.now() }).where('id', '=', this.id).execute();
  }
}
