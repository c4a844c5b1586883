import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RunRepository } from '../../src/agent/run.repository';
import { systemClock } from '../../src/clock';
import { openPostgres } from '../../src/storage/database';
import { SharedTaskRegistry } from '../../src/tasks/shared-task-registry';
import { type SharedRow, SharedTaskStore } from '../../src/tasks/shared-task.store';
import { fromRow, type TaskRecord } from '../../src/tasks/task.store';
import type { BodyOutcome } from '../../src/tasks/task-common';
import { TaskEngine } from '../../src/tasks/task-engine';
import { newTaskId } from '../../src/tasks/task-id';
import type { TaskSnapshot } from '../../src/tasks/task-submitter';
import { startTestHost, type TestHost } from '../support/host';
import { postgresAvailable, startPostgres, type TestPostgres } from '../support/postgres';
import { pidsIn, publishCommand, until } from '../tasks/helpers';

/**
 * Background tasks of two hosts on one PostgreSQL database share one queue: capacity is global,
 * a task is killed from either host (queued: withdrawn and never started; running on the other
 * host: that host kills it), and a task's end is announced once, on the host that accepted it.
 */

const TOKEN = 'shared-tasks-token-0123456789abcdef';

describe.skipIf(!postgresAvailable())('background tasks shared by two hosts', () => {
  let server: TestPostgres;
  let a: TestHost;
  let b: TestHost;
  let home: string;
  let databaseUrl: string;

  beforeAll(async () => {
    server = await startPostgres();
    databaseUrl = await server.createDatabase();
    home = mkdtempSync(join(tmpdir(), 'fengyu-shared-tasks-'));
    // eight task bodies per host: the sixteen global running slots are spread over both
    // (one owner fills all sixteen here; the per-owner cap on this path: shared-owner-cap.test.ts)
    const env = { ...process.env, FENGYU_TASK_WORKER_SLOTS: '8', FENGYU_TASK_OWNER_MAX_RUNNING: '16' };
    a = await startTestHost({ keepHome: home, databaseUrl, token: TOKEN, writeHostFile: false, sandbox: 'off', env });
    b = await startTestHost({ keepHome: home, databaseUrl, token: TOKEN, writeHostFile: false, sandbox: 'off', env });
  }, 120_000);
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await server?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  const state = async (h: TestHost, id: string): Promise<TaskSnapshot> => (await h.api('GET', `/api/agent/tasks/${id}`)).body as TaskSnapshot;

  /**
   * Writes what a host's death leaves of tasks it was running (its lease ran out, or it stops):
   * each row `running` on `hostId`, released, its pg-boss job active; `withRun`: a run row under the
   * task's id, interrupted (as the agent's sweep leaves it), named by the task row when `named`.
   */
  async function strand(hostId: string, workflowId: string, tasks: Array<{ id: string; withRun?: boolean; named?: boolean; killAsked?: boolean }>): Promise<void> {
    const db = a.host.ctx.db;
    const version = (await db.selectFrom('workflows').select('published_version').where('id', '=', workflowId).executeTakeFirstOrThrow()).published_version as number;
    const now = Date.now();
    const at = new Date(now).toISOString();
    const runs = new RunRepository(db);
    for (const t of tasks.filter((x) => x.withRun)) {
      await runs.insert({ id: t.id, owner: 'default', goal: null, status: 'interrupted', plan: null, config: '{}', inputs: '{}', files: null, gate: null, summary: null, error: 'gone', result: null, parent_run_id: null, origin: 'task', sandbox: '{"mode":"off"}', workflow_id: workflowId, workflow_version: version, last_seq: 0, created_at: at, updated_at: at, finished_at: at, host_id: hostId });
    }
    const row = (t: { id: string; named?: boolean; killAsked?: boolean }): SharedRow => ({ id: t.id, owner: 'default', kind: 'workflow', priority: 'normal', state: 'running', workflow_id: workflowId, workflow_version: version, run_id: t.named ? t.id : null, schedule_id: null, trigger_id: null, inputs: '{}', permission_mode: 'full-access', submitted_ms: now, started_ms: now, finished_ms: null, output_text: '', output_truncated: 0, error_code: null, error_message: null, files: null, host_id: hostId, released_ms: now, kill_requested: t.killAsked ? 1 : 0 });
    const store = new SharedTaskStore(db);
    await store.transaction(async (trx) => {
      await trx.insertInto('bg_tasks').values(tasks.map(row)).execute();
      for (const t of tasks) await sql`insert into pgboss.job (id, name, data, state, started_on, retry_limit) values (${t.id}::uuid, 'fengyu-tasks', ${JSON.stringify({ taskId: t.id })}::jsonb, 'active', now(), 0)`.execute(trx);
    });
  }

  const jobState = async (id: string): Promise<string | undefined> => ((await sql<{ state: string }>`select state from pgboss.job where id = ${id}::uuid`.execute(a.host.ctx.db)).rows[0] as { state: string } | undefined)?.state;

  it('announces a task’s end once, on the host that accepted it, wherever it ran', async () => {
    const quick = await publishCommand(a, 'echo shared-hello', { type: 'object', properties: {} }, 'quick');
    const seenA: string[] = [];
    const seenB: string[] = [];
    a.host.ctx.tasks?.onFinished((t) => seenA.push(t.id));
    b.host.ctx.tasks?.onFinished((t) => seenB.push(t.id));
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const r = await (i % 2 ? b : a).api('POST', '/api/agent/tasks', { workflowId: quick, permissionMode: 'full-access' });
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      ids.push(r.body.id as string);
    }
    const done = await b.api('POST', '/api/agent/tasks/wait', { ids, mode: 'all', timeoutMs: 60_000 });
    expect(done.body.timedOut).toBe(false);
    for (const t of done.body.tasks as TaskSnapshot[]) {
      expect(t.state).toBe('completed');
      expect(t.output.text).toContain('shared-hello');
    }
    await until(() => seenA.length + seenB.length === 6, 'every end to be announced', 30_000);
    expect(seenA.sort()).toEqual([ids[0], ids[2], ids[4]].sort());
    expect(seenB.sort()).toEqual([ids[1], ids[3], ids[5]].sort());
  }, 120_000);

  it('a task’s secret input reaches its run on whichever host runs it (the value is read from the database there)', async () => {
    // each host holds eight bodies: nine tasks that wait for a file run on both hosts at once
    const go = join(home, 'secret-go');
    const wf = await publishCommand(a, `printf %s {{inputs.pw}} | rev; while [ ! -e ${go} ]; do sleep 0.05; done`, { type: 'object', properties: { pw: { type: 'string', format: 'password' } } }, 'secret rev');
    const ids: string[] = [];
    for (let i = 0; i < 9; i++) {
      const r = await a.api('POST', '/api/agent/tasks', { workflowId: wf, permissionMode: 'full-access', inputs: { pw: `pw-host-${i}` } });
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      ids.push(r.body.id as string);
    }
    await until(async () => (await Promise.all(ids.map((id) => state(a, id)))).every((t) => t.state === 'running'), 'all nine to run', 60_000);
    writeFileSync(go, '');
    const done = await a.api('POST', '/api/agent/tasks/wait', { ids, mode: 'all', timeoutMs: 60_000 });
    expect(done.body.timedOut).toBe(false);
    const hosts = await a.host.ctx.db.selectFrom('bg_tasks').select(['id', 'host_id']).where('id', 'in', ids).execute();
    expect(new Set(hosts.map((h) => h.host_id)).size).toBe(2);
    for (const [i, id] of ids.entries()) {
      const t = (done.body.tasks as TaskSnapshot[]).find((x) => x.id === id);
      expect(t?.state).toBe('completed');
      expect(t?.output.text, `task ${i} on ${hosts.find((h) => h.id === id)?.host_id}`).toContain([...`pw-host-${i}`].reverse().join(''));
    }
  }, 120_000);

  it('a trigger’s secret default kept by one host is removed from the database when another host deletes the trigger', async () => {
    const wf = await publishCommand(a, 'true', { type: 'object', properties: { pw: { type: 'string', format: 'password' } } }, 'secret default');
    const made = (await a.api('POST', `/api/workflows/${wf}/webhooks`, { permissionMode: 'full-access', defaults: { pw: 'pw-default-on-a' } })).body as { trigger: { id: string } };
    const kept = () => a.host.ctx.db.selectFrom('secrets').select('name').where('name', 'like', `trigger:${made.trigger.id}/%`).execute();
    expect(await kept()).toHaveLength(1);
    expect((await b.api('DELETE', `/api/workflows/${wf}/webhooks/${made.trigger.id}`)).status).toBeLessThan(300);
    expect(await kept()).toEqual([]);
  });

  it('counts capacity across hosts and kills queued and running tasks from either host', async () => {
    const sleeper = await publishCommand(a, 'sleep 600', { type: 'object', properties: {} }, 'sleeper');
    const running: string[] = [];
    for (let i = 0; i < 16; i++) {
      const r = await (i % 2 ? b : a).api('POST', '/api/agent/tasks', { workflowId: sleeper, permissionMode: 'full-access' });
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      running.push(r.body.id as string);
    }
    await until(async () => (await Promise.all(running.map((id) => state(a, id)))).every((t) => t.state === 'running'), 'all 16 to run', 120_000);
    // the slots are global: a 17th waits, whichever host accepted it
    const queued = (await b.api('POST', '/api/agent/tasks', { workflowId: sleeper, permissionMode: 'full-access', priority: 'batch' })).body as TaskSnapshot;
    expect(queued.state).toBe('queued');
    await until(async () => {
      const c = (await a.api('GET', '/api/agent/tasks/capacity')).body;
      return c.running === 16 && c.queued === 1;
    }, 'host A to see the shared queue');
    // a secret input's value is written with its task's row in the admitting transaction: never for a refused task
    const secretSleeper = await publishCommand(a, 'sleep 600', { type: 'object', properties: { pw: { type: 'string', format: 'password' } } }, 'secret sleeper');
    const extra: string[] = [];
    for (let i = 0; i < 20; i++) {
      const r = await b.api('POST', '/api/agent/tasks', { workflowId: sleeper, permissionMode: 'full-access', priority: 'batch' });
      if (r.status !== 202) break;
      extra.push(r.body.id as string);
    }
    const refusedSecret = await a.api('POST', '/api/agent/tasks', { workflowId: secretSleeper, permissionMode: 'full-access', priority: 'batch', inputs: { pw: 'pw-shared-refused' } });
    expect(refusedSecret.status, JSON.stringify(refusedSecret.body)).toBe(429);
    const accepted = await a.api('POST', '/api/agent/tasks', { workflowId: secretSleeper, permissionMode: 'full-access', priority: 'interactive', inputs: { pw: 'pw-shared-accepted' } });
    expect(accepted.body.state).toBe('queued');
    // a webhook delivery that sends the secret input itself: its task's row keeps the marker, the vault the value
    const hook = (await a.api('POST', `/api/workflows/${secretSleeper}/webhooks`, { permissionMode: 'full-access' })).body as { trigger: { id: string }; secret: string };
    const sent = await fetch(`${a.host.url}/api/workflow-hooks/${hook.trigger.id}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-fengyu-webhook-secret': hook.secret }, body: JSON.stringify({ pw: 'pw-shared-delivered' }) });
    expect(sent.status).toBe(202);
    const delivered = ((await sent.json()) as { taskId: string }).taskId;
    const row = await a.host.ctx.db.selectFrom('bg_tasks').select('inputs').where('id', '=', delivered).executeTakeFirstOrThrow();
    expect(JSON.parse(row.inputs)).toEqual({ pw: '[redacted]' });
    const kept = await a.host.ctx.db.selectFrom('secrets').select('name').where('name', 'like', 'task:%').orderBy('name').execute();
    expect(kept.map((r) => r.name)).toEqual([`task:${accepted.body.id}/input/pw`, `task:${delivered}/input/pw`].sort());
    expect(a.host.ctx.vault.getInternal('default', `task:${accepted.body.id}/input/pw`)).toBe('pw-shared-accepted');
    for (const id of [...extra, accepted.body.id, delivered]) expect((await a.api('POST', `/api/agent/tasks/${id}/kill`)).body.state).toBe('cancelled');
    // a queued task killed through the other host is withdrawn and never starts
    const withdrawn = (await a.api('POST', `/api/agent/tasks/${queued.id}/kill`)).body as TaskSnapshot;
    expect(withdrawn.state).toBe('cancelled');
    expect(withdrawn.startedAt).toBeUndefined();
    // eight run on each host; killed through A, those on B are killed by B
    const hostsOf = await a.host.ctx.db.selectFrom('bg_tasks').select(['id', 'host_id']).where('id', 'in', running).execute();
    const perHost = new Map<string, number>();
    for (const r of hostsOf) perHost.set(r.host_id as string, (perHost.get(r.host_id as string) ?? 0) + 1);
    expect([...perHost.values()]).toEqual([8, 8]);
    // A kills its own before it answers; those on B get a kill request that B acts on at its next
    // round, and A's answer waits for B a bounded time, which a loaded B can outlast (the answer is
    // then still `running`). Only one host's tasks may answer late, and every task ends cancelled.
    const killed = await Promise.all(running.map((id) => a.api('POST', `/api/agent/tasks/${id}/kill`)));
    const hostOf = new Map(hostsOf.map((r) => [r.id, r.host_id as string]));
    const late = new Set<string>();
    for (const [i, k] of killed.entries()) {
      const answer = (k.body as TaskSnapshot).state;
      if (answer === 'cancelled') continue;
      expect(answer).toBe('running');
      late.add(hostOf.get(running[i] as string) as string);
    }
    expect(late.size).toBeLessThanOrEqual(1);
    await until(async () => (await Promise.all(running.map((id) => state(b, id)))).every((t) => t.state === 'cancelled'), 'every task to end cancelled', 60_000);
    for (const id of running) expect((await state(a, id)).state).toBe('cancelled');
    expect((await state(b, queued.id)).startedAt).toBeUndefined();
  }, 240_000);

  it('a dead host’s running task whose run was never written runs again once on a live host, even when two hosts sweep at once; one with a run is interrupted', async () => {
    const marks = join(home, 'requeue-marks');
    const wf = await publishCommand(a, `echo $$ >> ${marks}; echo requeued-ran`, { type: 'object', properties: {} }, 'requeued');
    const dead = 'dead-host-requeue';
    const t0 = Date.now();
    // unbegun: no run anywhere; begun: a run under its id the task row does not name (a crash right
    // after the run's commit); named: a run the task row records; killed: no run, but another host
    // asked for it to be killed (its killer waits for it to end, not to run)
    const [unbegun, begun, named, killed] = [newTaskId(t0), newTaskId(t0 + 1), newTaskId(t0 + 2), newTaskId(t0 + 3)] as [string, string, string, string];
    await strand(dead, wf, [{ id: unbegun }, { id: begun, withRun: true }, { id: named, withRun: true, named: true }, { id: killed, killAsked: true }]);
    const sweep = (h: TestHost) => h.host.ctx.tasksDomain?.sweepHosts?.([dead], false) ?? Promise.resolve(-1);
    // both hosts sweep the dead host at once: each task changes once
    const counts = await Promise.all([sweep(a), sweep(b)]);
    expect(counts[0] + counts[1]).toBe(4);
    const done = await b.api('POST', '/api/agent/tasks/wait', { ids: [unbegun], mode: 'all', timeoutMs: 60_000 });
    const end = done.body.tasks[0] as TaskSnapshot;
    expect(end.state, JSON.stringify(end)).toBe('completed');
    expect(end.runId).toBe(unbegun);
    expect(end.output.text).toContain('requeued-ran');
    expect(pidsIn(marks)).toHaveLength(1);
    for (const id of [begun, named, killed]) {
      const t = await state(a, id);
      expect(t.state).toBe('interrupted');
      expect(t.error?.code).toBe('task_interrupted');
      expect(await jobState(id)).toBe('failed');
    }
    expect(await jobState(unbegun)).toBe('completed');
    // a later sweep of the same host finds nothing to do
    expect(await sweep(a)).toBe(0);
    expect(await sweep(b)).toBe(0);
    expect((await state(a, unbegun)).state).toBe('completed');
    expect(pidsIn(marks)).toHaveLength(1);
    // no slot leaked: the queue drains and a new task still runs
    await until(async () => {
      const c = (await a.api('GET', '/api/agent/tasks/capacity')).body;
      return c.running === 0 && c.queued === 0;
    }, 'the shared queue to drain');
    const next = (await b.api('POST', '/api/agent/tasks', { workflowId: wf, permissionMode: 'full-access' })).body as TaskSnapshot;
    const after = await a.api('POST', '/api/agent/tasks/wait', { ids: [next.id], mode: 'all', timeoutMs: 60_000 });
    expect((after.body.tasks[0] as TaskSnapshot).state).toBe('completed');
    expect(pidsIn(marks)).toHaveLength(2);
  }, 120_000);

  it('a stopping host puts back a task whose body ended without writing its run, and interrupts one whose body outlasts the stop’s wait', async () => {
    // host C: the shared registry on its own connections and job engine, with bodies the test drives
    const opened = openPostgres(databaseUrl, 4);
    const logger = pino({ level: 'silent' });
    const engine = await TaskEngine.start(databaseUrl, logger);
    let release: (o: BodyOutcome) => void = () => undefined;
    const held = new Promise<BodyOutcome>((r) => {
      release = r;
    });
    const started: string[] = [];
    const body = {
      prepare: async () => ({ workflowVersion: 1, inputs: {} }),
      // `quiet` ends (cancelled) when the stop kills its slot, before any run; `stuck` ignores the kill
      run: (task: TaskRecord, hooks: { slot: { attach(fn: () => void): () => void } }) => {
        started.push(task.id);
        if (task.id === stuck) return held;
        return new Promise<BodyOutcome>((res) => hooks.slot.attach(() => res({ state: 'cancelled', text: '' })));
      },
    };
    const hostC = 'host-c-stopping';
    const c = new SharedTaskRegistry({ db: opened.db, url: databaseUrl, hostId: hostC, engine, clock: systemClock, logger, body, graces: { cooperative: 300, term: 100, kill: 100 } });
    const marks = join(home, 'stop-marks');
    const wf = await publishCommand(a, `echo $$ >> ${marks}`, { type: 'object', properties: {} }, 'stop-requeue');
    const t0 = Date.now();
    const [quiet, stuck] = [newTaskId(t0), newTaskId(t0 + 1)] as [string, string];
    // C took both (its claim committed): their bodies start here, as C's work() would start them
    await strand(hostC, wf, [{ id: quiet }, { id: stuck }]);
    const rows = await opened.db.withTables<{ bg_tasks: SharedRow }>().selectFrom('bg_tasks').selectAll().where('id', 'in', [quiet, stuck]).execute();
    for (const r of rows) (c as unknown as { launch(t: TaskRecord): void }).launch(fromRow(r as SharedRow));
    await until(() => started.length === 2, 'both bodies to start');
    await c.close();
    // the body that ended without a run is put back and runs once on A or B, under its own id
    const back = (await a.api('POST', '/api/agent/tasks/wait', { ids: [quiet], mode: 'all', timeoutMs: 60_000 })).body.tasks[0] as TaskSnapshot;
    expect(back.state, JSON.stringify(back)).toBe('completed');
    expect(back.runId).toBe(quiet);
    expect(pidsIn(marks)).toHaveLength(1);
    // the one still going when the stop's wait ran out might have been writing its run: interrupted, never run
    expect((await state(a, stuck)).state).toBe('interrupted');
    expect(await jobState(stuck)).toBe('failed');
    release({ state: 'failed', text: '', error: { code: 'x', message: 'late' } });
    await opened.close();
  }, 120_000);

  it('a host that stops leaves its running tasks interrupted, never run again, and the queued one in the shared queue, run once', async () => {
    const marks = join(home, 'shared-marks');
    const sleeper = await publishCommand(a, `echo $$ >> ${marks}; sleep 600`, { type: 'object', properties: {} }, 'sleeper2');
    const laterMarks = join(home, 'shared-later');
    const later = await publishCommand(a, `echo $$ >> ${laterMarks}`, { type: 'object', properties: {} }, 'later');
    const running: string[] = [];
    for (let i = 0; i < 16; i++) running.push((await (i % 2 ? b : a).api('POST', '/api/agent/tasks', { workflowId: sleeper, permissionMode: 'full-access' })).body.id as string);
    await until(async () => (await Promise.all(running.map((id) => state(a, id)))).every((t) => t.state === 'running'), 'all 16 to run', 120_000);
    // a task is running before its command's shell has written its mark: wait for all sixteen marks
    await until(async () => pidsIn(marks).length === 16, 'all 16 sleepers to mark', 60_000);
    const queued = (await b.api('POST', '/api/agent/tasks', { workflowId: later, permissionMode: 'full-access', priority: 'batch' })).body as TaskSnapshot;
    expect(queued.state).toBe('queued');
    // a task B holds running whose run was never written (as a crash before its body began leaves it)
    const strandedMarks = join(home, 'shared-stranded');
    const strandedWf = await publishCommand(a, `echo $$ >> ${strandedMarks}`, { type: 'object', properties: {} }, 'stranded');
    const stranded = newTaskId(Date.now());
    await strand((b.host.ctx.tasks as unknown as { deps: { hostId: string } }).deps.hostId, strandedWf, [{ id: stranded }]);
    await b.close();
    // B's eight are interrupted, never run again
    const states = await Promise.all(running.map((id) => state(a, id)));
    expect(states.filter((t) => t.state === 'interrupted')).toHaveLength(8);
    // The queued one is never lost and never run twice. Either it was still in the shared queue and
    // runs once a slot frees (one of A's sleepers is killed if none is free), or the stopping host had
    // just taken it: then it had started there, ends interrupted with the others, and is not run again.
    if ((await state(a, queued.id)).state === 'queued') {
      const onA = running.filter((_, i) => states[i]?.state === 'running');
      expect((await a.api('POST', `/api/agent/tasks/${onA[0]}/kill`)).status).toBe(200);
    }
    const done = await a.api('POST', '/api/agent/tasks/wait', { ids: [queued.id], mode: 'all', timeoutMs: 60_000 });
    const end = done.body.tasks[0] as TaskSnapshot;
    expect(['completed', 'interrupted']).toContain(end.state);
    if (end.state === 'completed') expect(pidsIn(laterMarks)).toHaveLength(1);
    expect(pidsIn(laterMarks).length).toBeLessThanOrEqual(1);
    // nothing that had started ran again: sixteen sleepers started, once each
    expect(pidsIn(marks)).toHaveLength(16);
    await Promise.all(running.map((id) => a.api('POST', `/api/agent/tasks/${id}/kill`)));
    // B's stop put the stranded task back into the shared queue: it runs once on A, under its own id
    const back = (await a.api('POST', '/api/agent/tasks/wait', { ids: [stranded], mode: 'all', timeoutMs: 60_000 })).body.tasks[0] as TaskSnapshot;
    expect(back.state, JSON.stringify(back)).toBe('completed');
    expect(back.runId).toBe(stranded);
    expect(pidsIn(strandedMarks)).toHaveLength(1);
  }, 300_000);
});
