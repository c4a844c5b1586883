import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, openDatabase } from '../../src/storage/database';
import { SqliteTaskStore, type TaskRecord } from '../../src/tasks/task.store';
import { childApi, killChildHosts, startChildHost } from '../support/child-host';
import { startTestHost, type TestHost } from '../support/host';
import { alive, pidsIn, publishCommand, until } from './helpers';

/** Durable snapshots: a real restart on the same home; the finished-task cap on a real SQLite file. */

// one owner fills every running slot here (the child hosts inherit it); the per-owner running
// cap has its own test (owner-running-cap.test.ts)
process.env.FENGYU_TASK_OWNER_MAX_RUNNING = '16';
const ONE_OWNER_FILLS = { ...process.env };

const homes: string[] = [];
const hosts: TestHost[] = [];
afterAll(async () => {
  killChildHosts();
  for (const h of hosts) await h.close().catch(() => undefined);
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

describe('restart', () => {
  it('keeps finished tasks, brings running ones back interrupted and never re-runs them, and queues again the one only queued', async () => {
    const home = mkdtempSync(join(tmpdir(), 'fengyu-tasks-restart-'));
    homes.push(home);
    const marks = join(home, 'marks');
    const a = await startTestHost({ keepHome: home, env: ONE_OWNER_FILLS });
    hosts.push(a);
    const quick = await publishCommand(a, 'echo done-before-restart', { type: 'object', properties: {} }, 'quick');
    const slow = await publishCommand(a, `echo $$ >> ${marks}; sleep 600`, { type: 'object', properties: {} }, 'slow');
    const queuedMarks = join(home, 'queued-marks');
    const later = await publishCommand(a, `echo $$ >> ${queuedMarks}`, { type: 'object', properties: {} }, 'later');
    const done = (await a.api('POST', '/api/agent/tasks', { workflowId: quick, permissionMode: 'full-access' })).body;
    await a.api('GET', `/api/agent/tasks/${done.id}/output?timeoutMs=30000`);
    const running: string[] = [];
    for (let i = 0; i < 16; i++) running.push((await a.api('POST', '/api/agent/tasks', { workflowId: slow, permissionMode: 'full-access' })).body.id);
    const queued = (await a.api('POST', '/api/agent/tasks', { workflowId: later, permissionMode: 'full-access', priority: 'batch' })).body;
    expect(queued.state).toBe('queued');
    await until(() => pidsIn(marks).length >= 16, 'every body to start its command');
    const startedPids = pidsIn(marks);
    await a.close();
    // the host's stop ended the commands it started
    await until(() => startedPids.every((p) => !alive(p)), 'the commands to end with the host');

    const b = await startTestHost({ keepHome: home, env: ONE_OWNER_FILLS });
    hosts.push(b);
    const kept = (await b.api('GET', `/api/agent/tasks/${done.id}`)).body;
    expect(kept).toMatchObject({ state: 'completed', output: { truncated: false } });
    expect(kept.output.text).toContain('done-before-restart');
    for (const id of running) {
      const s = (await b.api('GET', `/api/agent/tasks/${id}`)).body;
      expect(s, id).toMatchObject({ state: 'interrupted', queued: false, error: { code: 'task_interrupted' } });
      expect(s.finishedAt).toBeTruthy();
    }
    // the task only queued (its body never started) was queued again, with its id, and ran once
    const waited = await b.api('POST', '/api/agent/tasks/wait', { ids: [queued.id], mode: 'all', timeoutMs: 30_000 });
    expect(waited.body.tasks[0]).toMatchObject({ id: queued.id, state: 'completed' });
    expect(waited.body.tasks[0].runId).toBeTruthy();
    expect(pidsIn(queuedMarks)).toHaveLength(1);
    // nothing that had started was replayed: no slot is in use and no slow command started again
    expect((await b.api('GET', '/api/agent/tasks/capacity')).body).toMatchObject({ running: 0, queued: 0 });
    expect(pidsIn(marks).length).toBe(startedPids.length);
    expect((await b.api('GET', '/api/agent/tasks?state=interrupted&limit=200')).body.items).toHaveLength(16);
  }, 120_000);
});

/** A real host in its own process (so it can be SIGKILLed). */
const serve = startChildHost;
const call = childApi;

describe('crash', () => {
  it('after a SIGKILL of the host, running tasks come back interrupted and are not re-run; the queued one is queued again', async () => {
    const home = mkdtempSync(join(tmpdir(), 'fengyu-tasks-crash-'));
    homes.push(home);
    const first = await serve(home);
    const def = (await call(first, 'POST', '/api/workflows', { name: 'long', plan: { steps: [{ id: 's', tool: 'slow', arguments: { ms: 60000 } }] } })).body;
    await call(first, 'POST', `/api/workflows/${def.id}/publish`, { revision: def.revision });
    const ids: string[] = [];
    for (let i = 0; i < 17; i++) {
      const r = await call(first, 'POST', '/api/agent/tasks', { workflowId: def.id, permissionMode: 'full-access' });
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      ids.push(r.body.id);
    }
    expect((await call(first, 'GET', '/api/agent/tasks/capacity')).body).toMatchObject({ running: 16, queued: 1 });
    // every running task's run is written (one whose run was not would be queued again, below)
    for (const id of ids.slice(0, 16)) await until(async () => (await call(first, 'GET', `/api/agent/tasks/${id}`)).body.runId, `the run of ${id} to be recorded`);
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));

    const second = await serve(home);
    const queued = ids[16] as string;
    for (const id of ids.slice(0, 16)) expect((await call(second, 'GET', `/api/agent/tasks/${id}`)).body, id).toMatchObject({ state: 'interrupted', error: { code: 'task_interrupted' } });
    const again = await until(async () => {
      const t = (await call(second, 'GET', `/api/agent/tasks/${queued}`)).body;
      return t.state === 'running' && t.runId ? t : undefined;
    }, 'the queued task to run after the restart');
    expect(again.error).toBeUndefined();
    expect((await call(second, 'GET', '/api/agent/tasks/capacity')).body).toMatchObject({ running: 1, queued: 0 });
    const runs = (await call(second, 'GET', '/api/agent/runs?limit=50')).body;
    const items = (runs.items ?? runs.runs ?? runs) as Array<{ id: string; status: string }>;
    // the runs of the interrupted tasks are not live; the one running is the queued task's
    expect(items.filter((r) => r.status === 'running').map((r) => r.id)).toEqual([again.runId]);
    second.child.kill('SIGKILL');
  }, 120_000);

  it('a task killed at task-start (its start committed, its run never written) is queued again and runs once; the same for one leaving the queue', async () => {
    const home = mkdtempSync(join(tmpdir(), 'fengyu-tasks-start-crash-'));
    homes.push(home);
    const setup = await serve(home);
    const def = (await call(setup, 'POST', '/api/workflows', { name: 'long', plan: { steps: [{ id: 's', tool: 'slow', arguments: { ms: 60000 } }] } })).body;
    await call(setup, 'POST', `/api/workflows/${def.id}/publish`, { revision: def.revision });
    setup.child.kill('SIGKILL');
    await new Promise((r) => setup.child.once('exit', r));

    // straight into a slot: the first pass of task-start
    const first = await serve(home, { FENGYU_CRASH_AT: 'task-start' });
    const exited = new Promise((r) => first.child.once('exit', (_c, signal) => r(signal)));
    await call(first, 'POST', '/api/agent/tasks', { workflowId: def.id, permissionMode: 'full-access' }).catch(() => undefined);
    expect(await exited).toBe('SIGKILL');
    // the next start queues it again (its run was never written) and runs it under its own id: pass 1
    const second = await serve(home, { FENGYU_CRASH_AT: 'task-start:17' });
    const exited2 = new Promise((res) => second.child.once('exit', (_c, signal) => res(signal)));
    const a = await until(async () => {
      const items = (await call(second, 'GET', '/api/agent/tasks?limit=100')).body.items as Array<{ id: string; state: string; runId?: string }>;
      return items.length === 1 && items[0]?.state === 'running' && items[0].runId === items[0].id ? items[0] : undefined;
    }, 'the task that died at its start to run after the restart');
    // out of the queue: 15 more bodies start (passes 2–16), the 16th waits; one killed frees its slot, the 16th dies at its start
    const ids: string[] = [];
    for (let i = 0; i < 16; i++) ids.push((await call(second, 'POST', '/api/agent/tasks', { workflowId: def.id, permissionMode: 'full-access' })).body.id);
    for (const id of ids.slice(0, 15)) await until(async () => (await call(second, 'GET', `/api/agent/tasks/${id}`)).body.runId, `the run of ${id} to be recorded`);
    void call(second, 'POST', `/api/agent/tasks/${ids[0]}/kill`).catch(() => undefined);
    expect(await exited2).toBe('SIGKILL');

    const third = await serve(home);
    const last = ids[15] as string;
    // the one that died leaving the queue had not begun a run either: queued again, it runs under its id
    const again = await until(async () => {
      const t = (await call(third, 'GET', `/api/agent/tasks/${last}`)).body;
      return t.state === 'running' && t.runId === last ? t : undefined;
    }, 'the task that died leaving the queue to run after the restart');
    expect(again.error).toBeUndefined();
    const all = (await call(third, 'GET', '/api/agent/tasks?limit=100')).body.items as Array<{ id: string; state: string }>;
    const state = (id: string) => all.find((t) => t.id === id)?.state;
    // the others had begun their runs (the first one too, on the second host): never run again
    expect(state(a.id)).toBe('interrupted');
    expect(state(ids[0] as string)).toBe('cancelled');
    expect(ids.slice(1, 15).map(state)).toEqual(ids.slice(1, 15).map(() => 'interrupted'));
    expect((await call(third, 'GET', '/api/agent/tasks/capacity')).body).toMatchObject({ running: 1, queued: 0 });
    const runs = (await call(third, 'GET', '/api/agent/runs?limit=50')).body.runs as Array<{ id: string; status: string }>;
    expect(runs.filter((x) => x.status === 'running').map((x) => x.id)).toEqual([last]);
    third.child.kill('SIGKILL');
  }, 300_000);
});

describe('the finished-task cap', () => {
  it('keeps the newest 100 finished tasks and every live one', async () => {
    const home = mkdtempSync(join(tmpdir(), 'fengyu-tasks-store-'));
    homes.push(home);
    const opened = openDatabase(home);
    await migrate(opened.db);
    const store = new SqliteTaskStore(opened.db);
    const base: Omit<TaskRecord, 'id' | 'state' | 'submittedMs'> = { ownerId: 'o', kind: 'workflow', priority: 'normal', workflowId: 'w', workflowVersion: 1, inputs: {}, permissionMode: 'ask', output: { text: 'x', truncated: false } };
    for (let i = 0; i < 130; i++) await store.save({ ...base, id: `f${String(i).padStart(3, '0')}`, state: 'completed', submittedMs: i, finishedMs: 1000 + i });
    await store.save({ ...base, id: 'live', state: 'running', submittedMs: 0, startedMs: 1 });
    await store.prune(100);
    const rows = await store.list('o', { limit: 500 });
    expect(rows).toHaveLength(101);
    expect(rows.some((r) => r.id === 'live')).toBe(true);
    expect(rows.some((r) => r.id === 'f029')).toBe(false);
    expect(rows.some((r) => r.id === 'f030')).toBe(true);
    // ties on the end time are ordered by id: the newest 100 by (end, id) stay, the rest go
    for (let i = 0; i < 5; i++) await store.save({ ...base, id: `t${i}`, state: 'failed', submittedMs: 2000 + i, finishedMs: 5000 });
    for (let i = 0; i < 96; i++) await store.save({ ...base, id: `n${String(i).padStart(3, '0')}`, state: 'completed', submittedMs: 3000 + i, finishedMs: 6000 + i });
    await store.prune(100);
    const kept = (await store.list('o', { limit: 500 })).map((r) => r.id).sort();
    expect(kept).toHaveLength(101);
    expect(kept.filter((id) => id.startsWith('t'))).toEqual(['t1', 't2', 't3', 't4']);
    expect(kept.filter((id) => id.startsWith('f'))).toEqual([]);
    expect(kept).toContain('live');
    await opened.close();
  });

  it('removes nothing while fewer than the cap have finished, and every finished task under a cap of 0', async () => {
    const home = mkdtempSync(join(tmpdir(), 'fengyu-tasks-store-'));
    homes.push(home);
    const opened = openDatabase(home);
    await migrate(opened.db);
    const store = new SqliteTaskStore(opened.db);
    const base: Omit<TaskRecord, 'id' | 'state' | 'submittedMs'> = { ownerId: 'o', kind: 'workflow', priority: 'normal', workflowId: 'w', workflowVersion: 1, inputs: {}, permissionMode: 'ask', output: { text: 'x', truncated: false } };
    for (let i = 0; i < 10; i++) await store.save({ ...base, id: `f${i}`, state: 'completed', submittedMs: i, finishedMs: 1000 });
    await store.save({ ...base, id: 'live', state: 'queued', submittedMs: 0 });
    await store.prune(100);
    expect(await store.list('o', { limit: 500 })).toHaveLength(11);
    await store.prune(10);
    expect(await store.list('o', { limit: 500 })).toHaveLength(11);
    await store.prune(9);
    expect((await store.list('o', { limit: 500 })).map((r) => r.id).sort()).toEqual(['f1', 'f2', 'f3', 'f4', 'f5', 'f6', 'f7', 'f8', 'f9', 'live']);
    await store.prune(0);
    expect((await store.list('o', { limit: 500 })).map((r) => r.id)).toEqual(['live']);
    await opened.close();
  });
});
