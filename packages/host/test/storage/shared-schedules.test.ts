import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expiryOf, nextFire, type Recurrence } from '../../src/schedules/recurrence';
import { ScheduleRepository, type ScheduleRow } from '../../src/schedules/schedule.repository';
import { ScheduleLoop, type Timers } from '../../src/schedules/schedule-loop';
import { migrate, type OpenedDatabase, openPostgres } from '../../src/storage/database';
import type { SubmitTaskRequest, TaskSubmitter } from '../../src/tasks/task-submitter';
import { postgresAvailable, startPostgres, type TestPostgres } from '../support/postgres';

/**
 * Two hosts' schedule loops on one PostgreSQL database (each with its own connection pool), woken
 * at the same instants: every occurrence of every schedule is submitted exactly once in total.
 */

class CountingSubmitter implements TaskSubmitter {
  submitted: SubmitTaskRequest[] = [];
  async submit(req: SubmitTaskRequest) {
    this.submitted.push(req);
    return {
      ok: true as const,
      task: {
        id: `task-${Math.random()}`,
        ownerId: req.ownerId,
        kind: req.kind,
        priority: req.priority,
        state: 'queued' as const,
        queued: true,
        workflowId: req.workflowId,
        workflowVersion: 1,
        submittedAt: new Date(0).toISOString(),
        queueWaitMs: 0,
        output: { text: '', truncated: false },
      },
    };
  }
  async get() {
    return undefined;
  }
  onFinished() {
    return () => {};
  }
}

const noTimers: Timers = { set: () => 0, clear: () => {} };
const T0 = Date.parse('2026-03-01T00:00:00Z');
const SCHEDULES = 20;
const BOUNDARIES = 10;

describe.skipIf(!postgresAvailable())('schedules on a shared PostgreSQL database', () => {
  let server: TestPostgres;
  const opened: OpenedDatabase[] = [];

  beforeAll(async () => {
    server = await startPostgres();
  });
  afterAll(async () => {
    for (const o of opened) await o.close();
    await server?.stop();
  });

  it('two hosts ticking at the same instants fire each occurrence once', async () => {
    const url = await server.createDatabase();
    const a = openPostgres(url);
    const b = openPostgres(url);
    opened.push(a, b);
    await Promise.all([migrate(a.db), migrate(b.db)]);
    let now = T0;
    const clock = { now: () => now };
    const rec: Recurrence = { kind: 'interval', everySeconds: 60 };
    const repoA = new ScheduleRepository(a.db);
    for (let i = 0; i < SCHEDULES; i++) {
      const row: ScheduleRow = {
        id: `s${i}`,
        owner: `o${i % 3}`,
        workflow_id: 'wf1',
        recurrence: JSON.stringify(rec),
        permission_mode: 'full-access',
        inputs: '{}',
        created_at: new Date(T0).toISOString(),
        anchor_ms: T0,
        next_run_ms: nextFire(rec, T0, T0) ?? null,
        expires_ms: expiryOf(rec, T0) ?? null,
        trigger_count: 0,
        missed_fires: 0,
        last_error: null,
        last_task_id: null,
        state: 'active',
        paused_reason: null,
        sandboxed: 0,
        claim_ms: null,
        claimed_at_ms: null,
        updated_at: new Date(T0).toISOString(),
      };
      await repoA.insert(row);
    }
    const subs = [new CountingSubmitter(), new CountingSubmitter()];
    const loops = [a, b].map(
      (o, i) =>
        new ScheduleLoop({ repo: new ScheduleRepository(o.db), submitter: () => subs[i], clock, posture: () => ({ mode: 'unsandboxed', backend: 'none' }), logger: pino({ level: 'silent' }), timers: noTimers }),
    );
    for (const l of loops) await l.start();
    for (let k = 1; k <= BOUNDARIES; k++) {
      now = T0 + k * 60_000;
      await Promise.all(loops.map((l) => l.tick()));
    }
    for (const l of loops) await l.stop();
    const all = subs.flatMap((s) => s.submitted);
    expect(all).toHaveLength(SCHEDULES * BOUNDARIES);
    const perSchedule = new Map<string, number>();
    for (const r of all) perSchedule.set(r.scheduleId as string, (perSchedule.get(r.scheduleId as string) ?? 0) + 1);
    expect([...perSchedule.values()]).toEqual(Array(SCHEDULES).fill(BOUNDARIES));
    const rows = await Promise.all(Array.from({ length: SCHEDULES }, (_, i) => repoA.byId(`s${i}`)));
    for (const r of rows) expect(r).toMatchObject({ trigger_count: BOUNDARIES, missed_fires: 0, claim_ms: null });
  });
});
