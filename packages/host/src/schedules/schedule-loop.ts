import { isFengYuError } from '@fengyu/protocol';
import type { Logger } from 'pino';
import type { CrashPoint } from '../config/crash-points';
import type { Clock, SandboxPosture } from '../context';
import type { TaskSubmitter } from '../tasks/task-submitter';
import { overdue, nextFire, type Recurrence } from './recurrence';
import type { RecordedError, ScheduleRepository, ScheduleRow, ScheduleState } from './schedule.repository';

/**
 * The loop that fires schedules. One fire = one ordinary background task (priority batch, kind
 * `workflow-schedule`, carrying the schedule id).
 *
 * At most once: the occurrence is claimed — `next_run_ms` advanced and the claim recorded, in
 * one conditional write — before the task is submitted. A claim still open when the host starts
 * again was caught by a crash: it is reported (lastError, counted in missedFires) and never
 * replayed, since a duplicated message, write or charge is worse than a missed occurrence.
 *
 * After downtime across several boundaries, the overdue ones coalesce into one recovery fire
 * (the first tick runs at start) and the others count in missedFires. A capacity refusal is
 * recorded as lastError and counted; that occurrence is not retried (the next boundary is).
 *
 * Timers: every wait is recomputed from the wall clock and capped (60 s by default), so a
 * clock jump or a suspended machine is noticed within one cap and no single timer is ever
 * longer than that.
 *
 * Posture: a schedule created while plugins ran sandboxed pauses (`sandbox_weakened`) while the
 * host runs unsandboxed, and resumes (next fire recomputed from now; the occurrences of the pause
 * are not replayed) once the sandbox is back.
 */

export const SANDBOX_WEAKENED = 'sandbox_weakened';
export const DEFAULT_MAX_WAIT_MS = 60_000;
/** How often a loop without a task executor looks again. */
const STARVED_WAIT_MS = 1_000;


export interface Timers {
  set(fn: () => void, ms: number): unknown;
  clear(handle: unknown): void;
}

const realTimers: Timers = {
  set: (fn, ms) => {
    const t = setTimeout(fn, ms);
    t.unref?.();
    return t;
  },
  clear: (h) => clearTimeout(h as NodeJS.Timeout),
};

export interface ScheduleLoopDeps {
  repo: ScheduleRepository;
  /** The background-task executor; read at fire time. */
  submitter: () => TaskSubmitter | undefined;
  clock: Clock;
  posture: () => SandboxPosture;
  logger: Logger;
  timers?: Timers;
  maxWaitMs?: number;
  /** Crash tests (docs/reliability.md): `schedule-due`, `schedule-claim`, `schedule-submit`. */
  crashPoint?: CrashPoint;
}

export type FireOutcome =
  | { kind: 'submitted'; taskId: string }
  | { kind: 'refused'; error: RecordedError }
  | { kind: 'failed'; error: RecordedError }
  | { kind: 'skipped' };

const iso = (ms: number) => new Date(ms).toISOString();

export class ScheduleLoop {
  private timer: unknown;
  private stopped = true;
  private chain: Promise<void> = Promise.resolve();
  private pending = false;
  private starved = false;
  private readonly timers: Timers;
  private readonly maxWaitMs: number;
  /** When the armed timer fires (epoch ms, by the injected clock); for tests and health. */
  armedFor: number | undefined;

  constructor(private readonly deps: ScheduleLoopDeps) {
    this.timers = deps.timers ?? realTimers;
    this.maxWaitMs = deps.maxWaitMs ?? DEFAULT_MAX_WAIT_MS;
  }

  /** Reports claims caught by a crash, then runs the first tick (recovery fires) right away. */
  async start(): Promise<void> {
    this.stopped = false;
    await this.recoverClaims();
    await this.tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.timers.clear(this.timer);
    this.timer = undefined;
    this.armedFor = undefined;
    await this.chain;
  }

  /** Runs a tick soon (after a create or a resume); ticks never overlap. */
  wake(): void {
    if (this.stopped) return;
    void this.tick();
  }

  /** One pass: posture, due fires, then the timer re-armed. Serialized. */
  tick(): Promise<void> {
    if (this.pending) return this.chain;
    this.pending = true;
    this.chain = this.chain.then(async () => {
      this.pending = false;
      try {
        await this.pass();
      } catch (err) {
        this.deps.logger.error({ err }, 'schedule tick failed');
      }
      await this.arm();
    });
    return this.chain;
  }

  private async pass(): Promise<void> {
    await this.applyPosture();
    // Without the task executor nothing is claimed: due occurrences wait for it.
    this.starved = this.deps.submitter() === undefined;
    if (this.starved) return;
    const now = this.deps.clock.now();
    for (const row of await this.deps.repo.due(now)) {
      if (this.stopped) return;
      await this.fire(row);
    }
  }

  private async arm(): Promise<void> {
    if (this.stopped) return;
    if (this.timer !== undefined) this.timers.clear(this.timer);
    const now = this.deps.clock.now();
    const earliest = await this.deps.repo.earliest();
    const floor = this.starved ? STARVED_WAIT_MS : 0;
    const wait = earliest === undefined ? this.maxWaitMs : Math.min(this.maxWaitMs, Math.max(floor, earliest - now));
    this.armedFor = now + wait;
    this.timer = this.timers.set(() => {
      this.timer = undefined;
      void this.tick();
    }, wait);
  }

  private async recoverClaims(): Promise<void> {
    const now = this.deps.clock.now();
    for (const row of await this.deps.repo.openClaims()) {
      const error: RecordedError = { code: 'schedule_claim_interrupted', params: { occurrence: iso(row.claim_ms as number) }, at: iso(now) };
      await this.deps.repo.missed(row.id, error, now);
      this.deps.logger.warn({ scheduleId: row.id, occurrence: error.params.occurrence }, 'a schedule occurrence was claimed before a crash; reported, not replayed');
    }
  }

  private async applyPosture(): Promise<void> {
    const now = this.deps.clock.now();
    if (this.deps.posture().mode !== 'sandboxed') {
      const n = await this.deps.repo.pauseSandboxed(SANDBOX_WEAKENED, now);
      if (n > 0) this.deps.logger.warn({ count: n }, 'plugins run unsandboxed: schedules created under the sandbox are paused');
      return;
    }
    for (const row of await this.deps.repo.pausedFor(SANDBOX_WEAKENED)) {
      const rec = JSON.parse(row.recurrence) as Recurrence;
      const next = nextFire(rec, now, row.anchor_ms) ?? null;
      await this.deps.repo.resume(row.id, SANDBOX_WEAKENED, next, next === null ? endState(rec) : 'active', now);
    }
  }

  /**
   * Claims the due occurrence of `row` and submits its task. Safe to call concurrently with the
   * loop: the claim is a conditional write, so one caller wins and the other skips.
   */
  async fire(row: ScheduleRow): Promise<FireOutcome> {
    const { repo, logger } = this.deps;
    const now = this.deps.clock.now();
    const due = row.next_run_ms;
    if (row.state !== 'active' || due === null || due > now || row.claim_ms !== null) return { kind: 'skipped' };
    if (row.sandboxed && this.deps.posture().mode !== 'sandboxed') {
      await repo.pauseSandboxed(SANDBOX_WEAKENED, now);
      return { kind: 'skipped' };
    }
    const rec = JSON.parse(row.recurrence) as Recurrence;
    const { count, next } = overdue(rec, due, now, row.anchor_ms);
    // Past its expiry (beyond the lateness of an ordinary wake-up) an interval runs no recovery fire.
    if (row.expires_ms !== null && now > row.expires_ms + this.maxWaitMs) {
      const error: RecordedError = { code: 'schedule_expired_unfired', params: { expiresAt: iso(row.expires_ms), count }, at: iso(now) };
      await repo.expireUnfired(row.id, due, count, error, now);
      return { kind: 'skipped' };
    }
    const submitter = this.deps.submitter();
    if (!submitter) return { kind: 'skipped' };
    this.deps.crashPoint?.('schedule-due');
    const claimed = await repo.claim(row.id, due, { nextRunMs: next ?? null, state: next === undefined ? endState(rec) : 'active', missed: count - 1, claimMs: due, at: now });
    if (!claimed) return { kind: 'skipped' };
    this.deps.crashPoint?.('schedule-claim');
    try {
      const res = await submitter.submit({
        ownerId: row.owner,
        workflowId: row.workflow_id,
        inputs: JSON.parse(row.inputs) as Record<string, unknown>,
        ...(row.files ? { files: JSON.parse(row.files) as unknown } : {}),
        priority: 'batch',
        kind: 'workflow-schedule',
        permissionMode: row.permission_mode as 'ask' | 'approve-for-me' | 'full-access',
        scheduleId: row.id,
      });
      this.deps.crashPoint?.('schedule-submit');
      const at = this.deps.clock.now();
      if (res.ok) {
        await repo.fired(row.id, res.task.id, at);
        return { kind: 'submitted', taskId: res.task.id };
      }
      const r = res.refusal;
      const error: RecordedError = {
        code: 'schedule_capacity_refused',
        params: { capacityScope: r.capacityScope, ...(r.capacityPriority ? { capacityPriority: r.capacityPriority } : {}), occurrence: iso(due) },
        at: iso(at),
      };
      await repo.missed(row.id, error, at);
      logger.warn({ scheduleId: row.id, refusal: r }, 'schedule fire refused for capacity; recorded, not retried');
      return { kind: 'refused', error };
    } catch (err) {
      const at = this.deps.clock.now();
      const error: RecordedError = isFengYuError(err)
        ? { code: err.code, params: { ...err.params, occurrence: iso(due) }, at: iso(at) }
        : { code: 'schedule_submit_failed', params: { occurrence: iso(due), reason: err instanceof Error ? err.message : String(err) }, at: iso(at) };
      // The workflow is gone: no later occurrence can run either.
      await repo.missed(row.id, error, at, error.code === 'workflow_not_found' ? 'disabled' : undefined);
      logger.warn({ scheduleId: row.id, err }, 'schedule fire could not be submitted');
      return { kind: 'failed', error };
    }
  }
}

/** Where a schedule with no fire left ends: a one-shot is done, an interval expired. */
export function endState(rec: Recurrence): ScheduleState {
  return rec.kind === 'once' ? 'done' : 'expired';
}
