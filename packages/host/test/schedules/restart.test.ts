import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * At most once across real crashes: the host runs as a child process on one home and is killed
 * with SIGKILL at labelled points around the claim (`FENGYU_CRASH_AT`), then started
 * again on the same home. The host's clock is shifted forward between runs so that interval
 * boundaries pass "while it is down". Counted: tasks carrying the schedule id — never more than
 * one per occurrence.
 */

const fixture = join(import.meta.dirname, 'schedule-fixture.ts');
const homes: string[] = [];
const children: ChildProcess[] = [];

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

interface Running {
  url: string;
  token: string;
  readyAt: number;
  posture: { mode: string };
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** Starts the fixture; resolves when it listens, or with `crashed` when it dies first. */
function start(home: string, offsetMs: number, crash?: string, sandbox = 'off'): Promise<Running | { crashed: NodeJS.Signals | null }> {
  const env = { ...process.env, ...(crash ? { FENGYU_CRASH_AT: crash } : {}) };
  if (!crash) delete env.FENGYU_CRASH_AT;
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, home, String(offsetMs), sandbox], { stdio: ['ignore', 'pipe', 'inherit'], env });
  children.push(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve) => {
    let buf = '';
    child.stdout?.on('data', (d) => {
      buf += d;
      const line = buf.split('\n')[0];
      if (buf.includes('\n') && line) resolve({ ...JSON.parse(line), child, exited });
    });
    void exited.then(({ signal }) => resolve({ crashed: signal }));
  });
}

async function started(home: string, offsetMs: number, sandbox = 'off'): Promise<Running> {
  const r = await start(home, offsetMs, undefined, sandbox);
  if ('crashed' in r) throw new Error(`the host died at start (${r.crashed})`);
  return r;
}

async function stop(h: Running): Promise<void> {
  h.child.kill('SIGKILL');
  await h.exited;
}

async function api(h: { url: string; token: string }, method: string, path: string, body?: unknown) {
  const res = await fetch(`${h.url}${path}`, { method, headers: { 'x-fengyu-token': h.token, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.status, body: (await res.json()) as any };
}

async function setup(h: Running, recurrence: unknown = { kind: 'interval', everySeconds: 3600 }): Promise<{ workflowId: string; scheduleId: string; createdAt: number }> {
  const made = await api(h, 'POST', '/api/workflows', { name: 'tick', plan: { steps: [{ id: 'a', tool: 'echo', arguments: { text: 'tick' } }] } });
  expect(made.status).toBe(200);
  expect((await api(h, 'POST', `/api/workflows/${made.body.id}/publish`, { revision: made.body.revision })).status).toBe(200);
  const s = await api(h, 'POST', '/api/agent/schedules', { workflowId: made.body.id, permissionMode: 'full-access', recurrence });
  expect(s.status).toBe(201);
  return { workflowId: made.body.id, scheduleId: s.body.id, createdAt: Date.parse(s.body.createdAt) };
}

async function tasksOf(h: Running, scheduleId: string): Promise<Array<{ id: string; scheduleId?: string; kind: string; priority: string; state: string; submittedAt: string }>> {
  const res = await api(h, 'GET', '/api/agent/tasks?limit=200');
  expect(res.status).toBe(200);
  const items = (res.body.items ?? res.body.tasks ?? res.body) as Array<{ id: string; scheduleId?: string; kind: string; priority: string; state: string; submittedAt: string }>;
  return items.filter((t) => t.scheduleId === scheduleId);
}

/** The test schedules fire hourly; the host's clock jumps whole hours, so real elapsed time never adds a boundary. */
const HOUR = 3600_000;

describe('schedules across real crashes (kill -9)', () => {
  it('downtime across boundaries: one recovery run within 10 s of the start, the rest in missedFires', async () => {
    const home = mkdtempSync(join(tmpdir(), 'fengyu-sched-restart-'));
    homes.push(home);
    const a = await started(home, 0);
    const { scheduleId, createdAt } = await setup(a);
    await stop(a);
    // five boundaries pass while the host is down
    const b = await started(home, 5 * HOUR + HOUR / 2);
    const tasks = await tasksOf(b, scheduleId);
    expect(tasks.length).toBe(1);
    expect(tasks[0]).toMatchObject({ kind: 'workflow-schedule', priority: 'batch' });
    expect(Date.parse(tasks[0]?.submittedAt as string) - b.readyAt).toBeLessThan(10_000);
    const s = (await api(b, 'GET', `/api/agent/schedules/${scheduleId}`)).body;
    expect(s).toMatchObject({ triggerCount: 1, missedFires: 4, lastTaskId: tasks[0]?.id, state: 'active' });
    // the schedule page is told which fires fell while no host ran: the five boundaries, inside the recorded downtime
    const down = s.firesWhileDown as Array<{ at: string; downFrom: string; downUntil: string }>;
    expect(down.map((f) => Date.parse(f.at))).toEqual([1, 2, 3, 4, 5].map((k) => createdAt + k * HOUR));
    expect(Date.parse(down[0]?.downFrom as string)).toBeLessThan(createdAt + HOUR);
    expect(Date.parse(down[0]?.downUntil as string)).toBeLessThanOrEqual(b.readyAt);
    expect(Date.parse(down[0]?.downUntil as string)).toBeGreaterThan(createdAt + 5 * HOUR);
    await stop(b);
  }, 300_000);

  it('kill -9 at every labelled point, repeated: no occurrence is ever submitted twice, none is lost unreported', async () => {
    const home = mkdtempSync(join(tmpdir(), 'fengyu-sched-crash-'));
    homes.push(home);
    const a = await started(home, 0);
    const { scheduleId } = await setup(a);
    await stop(a);
    const POINTS = ['schedule-due', 'schedule-claim', 'schedule-submit'] as const;
    const TRIALS = 2;
    let hours = 0;
    for (let trial = 0; trial < TRIALS; trial += 1) {
      for (const point of POINTS) {
        // one more boundary passes; the host starts, (reports an open claim,) fires and dies at `point`
        hours += 1;
        const crashing = await start(home, hours * HOUR + 1_000, point);
        expect(crashing, `trial ${trial}: the host should die at ${point}`).toEqual({ crashed: 'SIGKILL' });
      }
    }
    hours += 1;
    const b = await started(home, hours * HOUR + 1_000);
    const tasks = await tasksOf(b, scheduleId);
    const s = (await api(b, 'GET', `/api/agent/schedules/${scheduleId}`)).body;
    // each schedule-submit crash submitted one task (its claim is then reported), the last host one more
    expect(tasks.length).toBe(TRIALS + 1);
    expect(s.triggerCount).toBe(1);
    // every boundary is either fired or counted missed, exactly once
    expect(s.triggerCount + s.missedFires).toBe(hours);
    // the tasks belong to distinct occurrences: each was submitted in a different hour of host time
    const hoursOf = tasks.map((t) => Math.floor((Date.parse(t.submittedAt) - b.readyAt) / HOUR));
    expect(new Set(hoursOf).size).toBe(tasks.length);
    // a task whose run was never written when its host died is queued again by the next start, so it may still be live
    for (const t of tasks.filter((x) => x.id !== s.lastTaskId)) expect(['interrupted', 'completed', 'queued', 'running']).toContain(t.state);
    await stop(b);
  }, 900_000);

  it('a runImmediately fire killed right after its claim is reported after the restart, not replayed', async () => {
    const home = mkdtempSync(join(tmpdir(), 'fengyu-sched-immediate-'));
    homes.push(home);
    const crashing = await start(home, 0, 'schedule-claim');
    if ('crashed' in crashing) throw new Error('the host died before the request');
    const made = await api(crashing, 'POST', '/api/workflows', { name: 'now', plan: { steps: [{ id: 'a', tool: 'echo', arguments: { text: 'now' } }] } });
    await api(crashing, 'POST', `/api/workflows/${made.body.id}/publish`, { revision: made.body.revision });
    const res = await fetch(`${crashing.url}/api/agent/schedules`, {
      method: 'POST',
      headers: { 'x-fengyu-token': crashing.token, 'content-type': 'application/json' },
      body: JSON.stringify({ workflowId: made.body.id, permissionMode: 'full-access', runImmediately: true, recurrence: { kind: 'daily', time: '09:00', timeZone: 'UTC' } }),
    }).catch((e: Error) => e);
    expect(res).toBeInstanceOf(Error); // the host died inside the request
    expect((await crashing.exited).signal).toBe('SIGKILL');
    const b = await started(home, 1_000);
    const list = (await api(b, 'GET', '/api/agent/schedules')).body.items;
    expect(list.length).toBe(1);
    expect(list[0]).toMatchObject({ triggerCount: 0, missedFires: 1, lastError: { code: 'schedule_claim_interrupted' } });
    expect(await tasksOf(b, list[0].id)).toEqual([]);
    await stop(b);
  }, 300_000);
});
