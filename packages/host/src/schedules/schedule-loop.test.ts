import { FengYuError } from '@fengyu/protocol';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SandboxPosture } from '../context';
import { migrate, type OpenedDatabase, openDatabase } from '../storage/database';
import type { CapacityRefusal, SubmitTaskRequest, TaskSnapshot, TaskSubmitter } from '../tasks/task-submitter';
import { expiryOf, nextFire, type Recurrence } from './recurrence';
import { NEVER_FIRED, ScheduleRepository, type ScheduleRow } from './schedule.repository';
import { toView } from './schedule.service';
import { ScheduleLoop, type Timers } from './schedule-loop';

/**
 * The loop against a real SQLite database, a fake clock and fake timers, and a small in-memory
 * TaskSubmitter (this file only) that records every submission.
 */

class MemorySubmitter implements TaskSubmitter {
  submitted: SubmitTaskRequest[] = [];
  refuse: CapacityRefusal | undefined;
  fail: Error | undefined;
  async submit(req: SubmitTaskRequest) {
    if (this.fail) throw this.fail;
    if (this.refuse) return { ok: false as const, refusal: this.refuse };
    this.submitted.push(req);
    const task: TaskSnapshot = {
      id: `task-${this.submitted.length}`,
      ownerId: req.ownerId,
      kind: req.kind,
      priority: req.priority,
      state: 'queued',
      queued: true,
      workflowId: req.workflowId,
      workflowVersion: 1,
      ...(req.scheduleId ? { scheduleId: req.scheduleId } : {}),
      submittedAt: new Date(0).toISOString(),
      queueWaitMs: 0,
      output: { text: '', truncated: false },
    };
    return { ok: true as const, task };
  }
  async get() {
    return undefined;
  }
  onFinished() {
    return () => {};
  }
}

class FakeTimers implements Timers {
  waits: number[] = [];
  live = 0;
  set(_fn: () => void, ms: number) {
    this.waits.push(ms);
    this.live += 1;
    return this.live;
  }
  clear() {}
  get last(): number {
    return this.waits.at(-1) as number;
  }
}

const T0 = Date.parse('2026-03-01T00:00:00Z');
let database: OpenedDatabase;
let repo: ScheduleRepository;
let now: number;
let posture: SandboxPosture;
let submitter: MemorySubmitter;
let timers: FakeTimers;
const clock = { now: () => now };

function loop(extra: Partial<ConstructorParameters<typeof ScheduleLoop>[0]> = {}) {
  return new ScheduleLoop({ repo, submitter: () => submitter, clock, posture: () => posture, logger: pino({ level: 'silent' }), timers, ...extra });
}

let seq = 0;
async function insert(rec: Recurrence, opts: { anchor?: number; sandboxed?: boolean; next?: number } = {}): Promise<ScheduleRow> {
  const anchor = opts.anchor ?? now;
  const row: ScheduleRow = {
    id: `s${++seq}`,
    owner: 'alice',
    workflow_id: 'wf1',
    recurrence: JSON.stringify(rec),
    permission_mode: 'full-access',
    inputs: JSON.stringify({ x: 1 }),
    created_at: new Date(anchor).toISOString(),
    anchor_ms: anchor,
    next_run_ms: opts.next ?? nextFire(rec, anchor, anchor) ?? null,
    expires_ms: expiryOf(rec, anchor) ?? null,
    ...NEVER_FIRED,
    sandboxed: opts.sandboxed ? 1 : 0,
    updated_at: new Date(anchor).toISOString(),
  };
  await repo.insert(row);
  return row;
}

const view = async (id: string) => toView((await repo.byId(id)) as ScheduleRow);

beforeEach(async () => {
  database = openDatabase('', 'memory');
  await migrate(database.db);
  repo = new ScheduleRepository(database.db);
  now = T0;
  posture = { mode: 'unsandboxed', backend: 'none' };
  submitter = new MemorySubmitter();
  timers = new FakeTimers();
});

afterEach(async () => {
  await database.close();
});

describe('schedule loop', () => {
  it('fires a due occurrence as a batch workflow-schedule task and advances to the next boundary', async () => {
    const s = await insert({ kind: 'interval', everySeconds: 60 });
    const l = loop();
    await l.start();
    expect(submitter.submitted).toEqual([]);
    expect(timers.last).toBe(60_000);
    now = T0 + 60_000;
    await l.tick();
    expect(submitter.submitted).toEqual([{ ownerId: 'alice', workflowId: 'wf1', inputs: { x: 1 }, priority: 'batch', kind: 'workflow-schedule', permissionMode: 'full-access', scheduleId: s.id }]);
    expect(await view(s.id)).toMatchObject({ triggerCount: 1, missedFires: 0, lastTaskId: 'task-1', nextRunAt: new Date(T0 + 120_000).toISOString(), state: 'active' });
    await l.stop();
  });

  it('a late wake-up keeps the original boundaries (no drift)', async () => {
    const s = await insert({ kind: 'interval', everySeconds: 60 });
    const l = loop();
    await l.start();
    now = T0 + 60_000 + 700; // woke 0.7 s late
    await l.tick();
    expect(await view(s.id)).toMatchObject({ nextRunAt: new Date(T0 + 120_000).toISOString() });
    expect(timers.last).toBe(60_000 - 700);
    await l.stop();
  });

  it('downtime across several boundaries: one recovery fire at start, the rest counted in missedFires', async () => {
    const s = await insert({ kind: 'interval', everySeconds: 60 });
    now = T0 + 5 * 60_000 + 30_000; // boundaries 1..5 passed while the host was down
    const l = loop();
    await l.start();
    expect(submitter.submitted.length).toBe(1);
    expect(await view(s.id)).toMatchObject({ triggerCount: 1, missedFires: 4, nextRunAt: new Date(T0 + 6 * 60_000).toISOString() });
    await l.stop();
  });

  it('a calendar schedule after two days of downtime: one recovery fire, one missed', async () => {
    const s = await insert({ kind: 'daily', time: '09:00', timeZone: 'Europe/Berlin' });
    expect((await view(s.id)).nextRunAt).toBe('2026-03-01T08:00:00.000Z');
    now = Date.parse('2026-03-02T12:00:00Z');
    const l = loop();
    await l.start();
    expect(submitter.submitted.length).toBe(1);
    expect(await view(s.id)).toMatchObject({ triggerCount: 1, missedFires: 1, nextRunAt: '2026-03-03T08:00:00.000Z' });
    await l.stop();
  });

  it('a capacity refusal is recorded and counted, and not retried in a loop', async () => {
    const s = await insert({ kind: 'interval', everySeconds: 60 });
    submitter.refuse = { capacityScope: 'owner-priority', capacityPriority: 'batch', retryable: true, retryAfterSeconds: 1 };
    const l = loop();
    await l.start();
    now = T0 + 60_000;
    await l.tick();
    const v = await view(s.id);
    expect(v).toMatchObject({ triggerCount: 0, missedFires: 1, nextRunAt: new Date(T0 + 120_000).toISOString() });
    expect(v.lastError?.code).toBe('schedule_capacity_refused');
    expect(v.lastError?.message).toContain('owner-priority');
    // the refused occurrence is gone: more ticks at the same instant submit nothing, and the timer waits for the next boundary
    submitter.refuse = undefined;
    await l.tick();
    await l.tick();
    expect(submitter.submitted).toEqual([]);
    expect(timers.last).toBe(60_000);
    now = T0 + 120_000;
    await l.tick();
    expect(submitter.submitted.length).toBe(1);
    await l.stop();
  });

  it('a claim caught by a crash is reported after the restart and never replayed', async () => {
    const s = await insert({ kind: 'interval', everySeconds: 60 });
    const crashing = loop({
      crashPoint: (point) => {
        if (point === 'schedule-claim') throw new Error('simulated crash right after the claim');
      },
    });
    await crashing.start();
    now = T0 + 60_000;
    await crashing.tick();
    await crashing.stop();
    expect(submitter.submitted).toEqual([]);
    const claimed = (await repo.byId(s.id)) as ScheduleRow;
    expect(claimed.claim_ms).toBe(T0 + 60_000);
    expect(claimed.next_run_ms).toBe(T0 + 120_000);

    now = T0 + 61_000;
    const restarted = loop();
    await restarted.start();
    expect(submitter.submitted).toEqual([]);
    const v = await view(s.id);
    expect(v).toMatchObject({ triggerCount: 0, missedFires: 1, nextRunAt: new Date(T0 + 120_000).toISOString() });
    expect(v.lastError?.code).toBe('schedule_claim_interrupted');
    expect(v.lastError?.message).toContain(new Date(T0 + 60_000).toISOString());
    now = T0 + 120_000;
    await restarted.tick();
    expect(submitter.submitted.length).toBe(1);
    await restarted.stop();
  });

  it('a crash before the claim loses nothing: the occurrence fires after the restart', async () => {
    const s = await insert({ kind: 'interval', everySeconds: 60 });
    const crashing = loop({
      crashPoint: (point) => {
        if (point === 'schedule-due') throw new Error('simulated crash before the claim');
      },
    });
    await crashing.start();
    now = T0 + 60_000;
    await crashing.tick();
    await crashing.stop();
    const restarted = loop();
    await restarted.start();
    expect(submitter.submitted.length).toBe(1);
    expect(await view(s.id)).toMatchObject({ triggerCount: 1, missedFires: 0 });
    await restarted.stop();
  });

  it('two fires of the same occurrence race: exactly one submission', async () => {
    const s = await insert({ kind: 'interval', everySeconds: 60 });
    const a = loop();
    const b = loop();
    now = T0 + 60_000;
    const row = (await repo.byId(s.id)) as ScheduleRow;
    const outcomes = await Promise.all([a.fire(row), b.fire(row), a.fire(row)]);
    expect(outcomes.filter((o) => o.kind === 'submitted').length).toBe(1);
    expect(submitter.submitted.length).toBe(1);
  });

  it('waits are capped and recomputed from the wall clock (jumps forward and back)', async () => {
    const s = await insert({ kind: 'daily', time: '09:00', timeZone: 'UTC' });
    const l = loop();
    await l.start();
    expect(timers.last).toBe(60_000); // never one long timer
    // the clock jumps back an hour: nothing fires, the wait is still capped
    now = T0 - 3600_000;
    await l.tick();
    expect(submitter.submitted).toEqual([]);
    expect(timers.last).toBe(60_000);
    // the clock jumps forward past the boundary: it fires on the next wake-up
    now = Date.parse('2026-03-01T09:00:30Z');
    await l.tick();
    expect(submitter.submitted.length).toBe(1);
    expect(await view(s.id)).toMatchObject({ missedFires: 0, nextRunAt: '2026-03-02T09:00:00.000Z' });
    // 30 s before a boundary the wait is exactly the remaining time
    now = Date.parse('2026-03-02T08:59:30Z');
    await l.tick();
    expect(timers.last).toBe(30_000);
    await l.stop();
  });

  it('a one-shot fires once and is done', async () => {
    const s = await insert({ kind: 'once', delaySeconds: 120 });
    const l = loop();
    await l.start();
    now = T0 + 120_000;
    await l.tick();
    await l.tick();
    expect(submitter.submitted.length).toBe(1);
    expect(await view(s.id)).toMatchObject({ state: 'done', nextRunAt: null, triggerCount: 1 });
    await l.stop();
  });

  it('an interval expires 7 days after creation; one past its expiry while down runs nothing', async () => {
    const s = await insert({ kind: 'interval', everySeconds: 2 * 86400 });
    const l = loop();
    await l.start();
    for (const day of [2, 4, 6]) {
      now = T0 + day * 86400_000;
      await l.tick();
    }
    expect(submitter.submitted.length).toBe(3);
    expect(await view(s.id)).toMatchObject({ state: 'expired', nextRunAt: null, expiresAt: new Date(T0 + 7 * 86400_000).toISOString() });
    await l.stop();

    const t = await insert({ kind: 'interval', everySeconds: 86400 }, { anchor: T0 });
    now = T0 + 9 * 86400_000;
    const later = loop();
    await later.start();
    expect(submitter.submitted.length).toBe(3);
    const v = await view(t.id);
    expect(v).toMatchObject({ state: 'expired', nextRunAt: null, missedFires: 7 });
    expect(v.lastError?.code).toBe('schedule_expired_unfired');
    await later.stop();
  });

  it('pauses schedules created under the sandbox while the host runs unsandboxed, and resumes them', async () => {
    const sandboxed = await insert({ kind: 'interval', everySeconds: 60 }, { sandboxed: true });
    const plain = await insert({ kind: 'interval', everySeconds: 60 });
    const l = loop();
    await l.start(); // posture: unsandboxed
    expect(await view(sandboxed.id)).toMatchObject({ state: 'paused', pausedReason: 'sandbox_weakened' });
    expect((await view(plain.id)).state).toBe('active');
    now = T0 + 60_000;
    await l.tick();
    expect(submitter.submitted.map((r) => r.scheduleId)).toEqual([plain.id]);
    posture = { mode: 'sandboxed', backend: 'bwrap' };
    now = T0 + 150_000;
    await l.tick();
    const v = await view(sandboxed.id);
    expect(v.state).toBe('active');
    expect(v.pausedReason).toBeUndefined();
    expect(v.nextRunAt).toBe(new Date(T0 + 180_000).toISOString()); // recomputed from now, nothing replayed
    expect(v.missedFires).toBe(0);
    await l.stop();
  });

  it('a submission error is recorded; a deleted workflow disables the schedule', async () => {
    const s = await insert({ kind: 'interval', everySeconds: 60 });
    submitter.fail = new FengYuError('workflow_inputs_invalid', { fields: 'inputs.x' });
    const l = loop();
    await l.start();
    now = T0 + 60_000;
    await l.tick();
    let v = await view(s.id);
    expect(v).toMatchObject({ state: 'active', missedFires: 1, triggerCount: 0 });
    expect(v.lastError?.message).toContain('inputs.x');
    submitter.fail = new FengYuError('workflow_not_found', { id: 'wf1' });
    now = T0 + 120_000;
    await l.tick();
    v = await view(s.id);
    expect(v).toMatchObject({ state: 'disabled', nextRunAt: null, missedFires: 2 });
    await l.stop();
  });

  it('without a task executor nothing is claimed; the occurrence fires once one is there', async () => {
    const s = await insert({ kind: 'interval', everySeconds: 60 });
    let present = false;
    const l = loop({ submitter: () => (present ? submitter : undefined) });
    now = T0 + 60_000;
    await l.start();
    expect((await repo.byId(s.id))?.claim_ms).toBeNull();
    expect(timers.last).toBe(1_000); // no tight loop while waiting
    present = true;
    await l.tick();
    expect(submitter.submitted.length).toBe(1);
    await l.stop();
  });
});
