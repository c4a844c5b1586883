import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';
import { alive, pidsIn, publishCommand, until } from './helpers';

/** Background tasks over real HTTP: a real host, real workflows running real commands. */

let t: TestHost;
let scratch: string;
let quick: string;
let sleeper: string;
let secretSleeper: string;
const started: string[] = [];

beforeAll(async () => {
  // one owner fills every running slot here; the per-owner cap is tested in owner-running-cap.test.ts
  t = await startTestHost({ env: { ...process.env, FENGYU_TASK_OWNER_MAX_RUNNING: '16' } });
  scratch = mkdtempSync(join(tmpdir(), 'fengyu-tasks-'));
  quick = await publishCommand(t, 'echo "hello {{inputs.who}}"', { type: 'object', required: ['who'], properties: { who: { type: 'string', maxLength: 20 } } }, 'quick');
  sleeper = await publishCommand(t, 'sleep 600', { type: 'object', properties: {} }, 'sleeper');
  secretSleeper = await publishCommand(t, 'sleep 600', { type: 'object', properties: { pw: { type: 'string', format: 'password' } } }, 'secret sleeper');
});

afterAll(async () => {
  for (const id of started) await t.api('POST', `/api/agent/tasks/${id}/kill`);
  await t?.close();
  rmSync(scratch, { recursive: true, force: true });
});

async function submit(body: Record<string, unknown>, headers?: Record<string, string>) {
  const res = await t.api('POST', '/api/agent/tasks', { permissionMode: 'full-access', ...body }, headers);
  if (res.status === 202) started.push(res.body.id);
  return res;
}

async function count(): Promise<number> {
  return (await t.api('GET', '/api/agent/tasks?limit=200')).body.items.length;
}

describe('submitting and reading tasks', () => {
  it('runs a published workflow in the background: 202 at once, then the snapshot with output', async () => {
    const res = await submit({ workflowId: quick, inputs: { who: 'tasks' } });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({ ownerId: 'default', kind: 'workflow', priority: 'normal', workflowId: quick, workflowVersion: 1, output: { text: '', truncated: false } });
    expect(['running', 'queued']).toContain(res.body.state);
    const out = await t.api('GET', `/api/agent/tasks/${res.body.id}/output?timeoutMs=30000`);
    expect(out.status).toBe(200);
    expect(out.body, JSON.stringify(out.body)).toMatchObject({ state: 'completed', queued: false, output: { truncated: false } });
    expect(out.body.output.text).toContain('hello tasks');
    expect(out.body.runId).toBeTruthy();
    expect(Date.parse(out.body.startedAt)).toBeGreaterThanOrEqual(Date.parse(out.body.submittedAt));
    expect(Date.parse(out.body.finishedAt)).toBeGreaterThanOrEqual(Date.parse(out.body.startedAt));
    expect(out.body.runDurationMs).toBeGreaterThanOrEqual(0);
    expect(out.body.queueWaitMs).toBeGreaterThanOrEqual(0);
    // the body was an ordinary run of the runner, recorded with its workflow version and the task's mode
    const run = (await t.api('GET', `/api/agent/runs/${out.body.runId}`)).body;
    expect(run).toMatchObject({ status: 'completed', origin: 'task', workflowId: quick, workflowVersion: 1, config: { permissionMode: 'full-access', planApproval: false } });
    const list = await t.api('GET', '/api/agent/tasks?state=completed&limit=5');
    expect(list.body.items[0].id).toBe(res.body.id);
    const one = await t.api('GET', `/api/agent/tasks/${res.body.id}`);
    expect(one.body).toEqual(out.body);
  });

  it('refuses bad input with a clear code naming the field, and queues nothing', async () => {
    const before = await count();
    const unknown = await submit({ workflowId: 'no-such-workflow' });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error.code).toBe('workflow_not_found');
    const draft = (await t.api('POST', '/api/workflows', { name: 'draft only', plan: { steps: [{ id: 'a', tool: 'echo', arguments: { value: 1 } }] } })).body;
    const notPublished = await submit({ workflowId: draft.id });
    expect(notPublished.status).toBe(409);
    expect(notPublished.body.error.code).toBe('workflow_not_published');
    const missing = await submit({ workflowId: quick, inputs: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.error.code).toBe('workflow_inputs_invalid');
    expect(missing.body.error.message).toContain('who');
    const tooLong = await submit({ workflowId: quick, inputs: { who: 'x'.repeat(50) } });
    expect(tooLong.status).toBe(400);
    expect(tooLong.body.error.message).toContain('who');
    const prio = await submit({ workflowId: quick, inputs: { who: 'a' }, priority: 'urgent' });
    expect(prio.status).toBe(400);
    expect(prio.body.error).toMatchObject({ code: 'task_field_invalid' });
    expect(prio.body.error.message).toContain('priority');
    const zh = await submit({ workflowId: quick, inputs: { who: 'a' }, priority: 'urgent' }, { 'accept-language': 'zh-CN' });
    expect(zh.body.error.message).toContain('priority');
    expect(zh.body.error.message).toContain('字段');
    const mode = await submit({ workflowId: quick, inputs: { who: 'a' }, permissionMode: 'yolo' });
    expect(mode.status).toBe(400);
    expect(mode.body.error.message).toContain('permissionMode');
    const extra = await submit({ workflowId: quick, inputs: { who: 'a' }, bogus: 1 });
    expect(extra.status).toBe(400);
    expect(await count()).toBe(before);
    expect((await t.api('GET', '/api/agent/tasks/capacity')).body.queued).toBe(0);
  });

  it('shows another owner nothing: 404 for get, output, kill and wait; own list and capacity only', async () => {
    const mine = await submit({ workflowId: quick, inputs: { who: 'me' } });
    await t.api('GET', `/api/agent/tasks/${mine.body.id}/output?timeoutMs=30000`);
    const bob = (await t.api('POST', '/api/owners', { name: 'bob-tasks' })).body.token as string;
    const h = { 'x-fengyu-token': bob };
    for (const [method, path, body] of [
      ['GET', `/api/agent/tasks/${mine.body.id}`, undefined],
      ['GET', `/api/agent/tasks/${mine.body.id}/output?timeoutMs=0`, undefined],
      ['POST', `/api/agent/tasks/${mine.body.id}/kill`, undefined],
      ['POST', '/api/agent/tasks/wait', { ids: [mine.body.id], mode: 'any', timeoutMs: 0 }],
    ] as const) {
      const res = await t.api(method, path, body, h);
      expect(res.status, `${method} ${path}`).toBe(404);
      expect(res.body.error.code).toBe('task_not_found');
    }
    expect((await t.api('GET', '/api/agent/tasks', undefined, h)).body.items).toEqual([]);
    const cap = (await t.api('GET', '/api/agent/tasks/capacity', undefined, h)).body;
    expect(cap).toMatchObject({ ownedQueued: 0, ownedRunning: 0 });
    expect(JSON.stringify(cap)).not.toContain(mine.body.id);
  });

  it('waits for any or all of several tasks, and times out with timedOut', async () => {
    const a = await submit({ workflowId: quick, inputs: { who: 'a' } });
    const b = await submit({ workflowId: quick, inputs: { who: 'b' } });
    const all = await t.api('POST', '/api/agent/tasks/wait', { ids: [a.body.id, b.body.id], mode: 'all', timeoutMs: 30000 });
    expect(all.status).toBe(200);
    expect(all.body.timedOut).toBe(false);
    expect(all.body.tasks.map((x: { state: string }) => x.state)).toEqual(['completed', 'completed']);
    const slow = await submit({ workflowId: sleeper });
    const timed = await t.api('POST', '/api/agent/tasks/wait', { ids: [slow.body.id], mode: 'any', timeoutMs: 50 });
    expect(timed.body).toMatchObject({ timedOut: true, tasks: [{ id: slow.body.id, state: 'running' }] });
    const any = await t.api('POST', '/api/agent/tasks/wait', { ids: [slow.body.id, a.body.id], mode: 'any', timeoutMs: 30000 });
    expect(any.body.timedOut).toBe(false);
    for (const bad of [{ ids: [], mode: 'any' }, { ids: Array.from({ length: 21 }, (_, i) => `x${i}`), mode: 'all' }, { ids: [a.body.id], mode: 'some' }]) {
      const res = await t.api('POST', '/api/agent/tasks/wait', bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
    }
    const killed = await t.api('POST', `/api/agent/tasks/${slow.body.id}/kill`);
    expect(killed.body.state).toBe('cancelled');
  });
});

describe('capacity, reservations and kills', () => {
  it('fills the slots, queues, refuses with 429 + Retry-After naming the reservation, and frees a killed queued slot at once', async () => {
    const running: string[] = [];
    for (let i = 0; i < 16; i++) {
      const r = await submit({ workflowId: sleeper, priority: 'interactive' });
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      expect(r.body.state).toBe('running');
      running.push(r.body.id);
    }
    const queued: string[] = [];
    for (let i = 0; i < 16; i++) {
      const r = await submit({ workflowId: sleeper, priority: 'batch' });
      expect(r.status).toBe(202);
      expect(r.body).toMatchObject({ state: 'queued', queued: true });
      queued.push(r.body.id);
    }
    const refused = await submit({ workflowId: sleeper, priority: 'batch' });
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(refused.body.error).toMatchObject({ code: 'capacity_exhausted', details: { capacityScope: 'owner-priority', capacityPriority: 'batch', retryable: true, retryAfterSeconds: 1 } });
    // refused with a secret input: the value it would keep under its task's id is never written to the vault
    expect((await submit({ workflowId: secretSleeper, priority: 'batch', inputs: { pw: 'pw-refused-4b1f' } })).status).toBe(429);
    // interactive room is reserved
    const inter = await submit({ workflowId: secretSleeper, priority: 'interactive', inputs: { pw: 'pw-accepted-0c3d' } });
    expect(inter.body.state).toBe('queued');
    // the accepted (queued) one keeps its value under its id until its run starts; the refused one left none
    const kept = await t.host.ctx.db.selectFrom('secrets').select('name').where('name', 'like', 'task:%').execute();
    expect(kept.map((r) => r.name)).toEqual([`task:${inter.body.id}/input/pw`]);
    expect(t.host.ctx.vault.getInternal('default', `task:${inter.body.id}/input/pw`)).toBe('pw-accepted-0c3d');
    const cap = (await t.api('GET', '/api/agent/tasks/capacity')).body;
    expect(cap).toMatchObject({
      policy: 'owner-round-robin-weighted-priority',
      maxRunning: 16,
      running: 16,
      maxQueued: 128,
      queued: 17,
      saturated: true,
      activeOwners: 1,
      byPriority: { interactive: { running: 16, queued: 1 }, normal: { running: 0, queued: 0 }, batch: { running: 0, queued: 16 } },
      batchLimit: { owner: 16, global: 64, ownerCount: 16, globalCount: 16 },
      nonInteractiveLimit: { owner: 24, global: 96, ownerCount: 16, globalCount: 16 },
      ownerQueueLimit: 32,
      ownedQueued: 17,
      ownedRunning: 16,
      ownedQueueAvailable: 15,
      ownerSaturated: false,
    });
    for (const f of ['oldestQueueWaitMs', 'oldestInteractiveQueueWaitMs', 'oldestBatchQueueWaitMs']) expect(cap[f]).toBeGreaterThanOrEqual(0);
    expect(cap.oldestNormalQueueWaitMs).toBe(0);

    // a queued kill: cancelled before its body starts, the slot is free at once
    const victim = queued[0] as string;
    const killed = await t.api('POST', `/api/agent/tasks/${victim}/kill`);
    expect(killed.body).toMatchObject({ state: 'cancelled', queued: false, error: { code: 'task_cancelled' } });
    expect(killed.body.runId).toBeUndefined();
    expect(killed.body.startedAt).toBeUndefined();
    expect((await t.api('GET', '/api/agent/tasks/capacity')).body.batchLimit.ownerCount).toBe(15);
    const again = await submit({ workflowId: sleeper, priority: 'batch' });
    expect(again.status).toBe(202);
    queued.push(again.body.id);

    // metrics saw the rejection and the cancelled wait
    const metrics = await fetch(`${t.host.url}/metrics`, { headers: { 'x-fengyu-token': t.host.token } });
    const text = await metrics.text();
    expect(text).toContain('fengyu_bg_tasks_rejected_total{priority="batch",scope="owner-priority"} 2');
    expect(text).toMatch(/fengyu_bg_task_queue_wait_seconds_count\{priority="batch",outcome="cancelled"\} 1/);
    expect(text).toContain('fengyu_bg_queue_inqueue{priority="batch"} 16');

    // the queue drains in order as running tasks end: killing a running one starts a queued one
    const first = running[0] as string;
    const k = await t.api('POST', `/api/agent/tasks/${first}/kill`);
    expect(k.body.state).toBe('cancelled');
    expect(k.body.runId).toBeTruthy();
    const run = await until(async () => {
      const r = (await t.api('GET', `/api/agent/runs/${k.body.runId}`)).body;
      return r.status === 'cancelled' ? r : undefined;
    }, 'the killed run to be cancelled');
    expect(run.status).toBe('cancelled');
    // the interactive one was queued later but its class has the turn before batch
    const next = await until(async () => {
      const s = (await t.api('GET', `/api/agent/tasks/${inter.body.id}`)).body;
      return s.state === 'running' ? s : undefined;
    }, 'the queued interactive task to start');
    expect(next.queueWaitMs).toBeGreaterThanOrEqual(0);
    for (const id of [...queued, ...running, inter.body.id]) await t.api('POST', `/api/agent/tasks/${id}/kill`);
    expect((await t.api('GET', '/api/agent/tasks/capacity')).body).toMatchObject({ running: 0, queued: 0 });
  }, 120_000);

  it('kills a running task: cooperative cancel, then SIGTERM/SIGKILL reach processes that left the command’s group', async () => {
    const pidFile = join(scratch, 'pids');
    const escapee = await publishCommand(t, `echo $$ >> ${pidFile}; setsid bash -c 'echo $$ >> ${pidFile}; sleep 600 & echo $! >> ${pidFile}; wait' & sleep 600 & echo $! >> ${pidFile}; wait`, { type: 'object', properties: {} }, 'escapee');
    const res = await submit({ workflowId: escapee });
    expect(res.status).toBe(202);
    const pids = await until(async () => {
      if (pidsIn(pidFile).length >= 4) return pidsIn(pidFile);
      const s = (await t.api('GET', `/api/agent/tasks/${res.body.id}`)).body;
      if (s.state !== 'running') throw new Error(`the task ended: ${JSON.stringify(s)}`);
    }, 'the commands to start');
    for (const p of pids) expect(alive(p)).toBe(true);
    const killed = await t.api('POST', `/api/agent/tasks/${res.body.id}/kill`);
    expect(killed.status).toBe(200);
    expect(killed.body).toMatchObject({ state: 'cancelled', error: { code: 'task_cancelled' } });
    for (const p of pids) expect(alive(p), `process ${p} of ${pids.join(',')}: ${JSON.stringify(killed.body)} ${alive(p) ? readFileSync(`/proc/${p}/cmdline`, 'utf8') : ''}`).toBe(false);
    // the slot is free again
    expect((await t.api('GET', '/api/agent/tasks/capacity')).body.running).toBe(0);
  }, 60_000);

  it('a kill that arrives at once (before the body attached its canceller) still cancels the run', async () => {
    const res = await submit({ workflowId: sleeper });
    const killed = await t.api('POST', `/api/agent/tasks/${res.body.id}/kill`);
    expect(killed.body.state).toBe('cancelled');
    const snap = (await t.api('GET', `/api/agent/tasks/${res.body.id}`)).body;
    if (snap.runId) {
      const run = await until(async () => {
        const r = (await t.api('GET', `/api/agent/runs/${snap.runId}`)).body;
        return ['cancelled', 'failed', 'completed'].includes(r.status) ? r : undefined;
      }, 'the run to end');
      expect(run.status).toBe('cancelled');
    }
  });

  it('under ask, an unattended command step waits in the inbox (task waiting) instead of failing', async () => {
    const res = await t.api('POST', '/api/agent/tasks', { workflowId: quick, inputs: { who: 'ask' } });
    expect(res.status).toBe(202);
    started.push(res.body.id);
    const snap = await until(async () => {
      const s = (await t.api('GET', `/api/agent/tasks/${res.body.id}`)).body;
      return s.state === 'waiting' ? s : undefined;
    }, 'the task to wait');
    const item = ((await t.api('GET', '/api/inbox')).body.items as Array<{ runId: string; kind: string }>).find((i) => i.runId === snap.runId);
    expect(item?.kind).toBe('step_approval');
    const killed = await t.api('POST', `/api/agent/tasks/${res.body.id}/kill`);
    expect(killed.body.state).toBe('cancelled');
  });
});

describe('metrics', () => {
  it('serves exactly the scheduler series plus process metrics behind the host token', async () => {
    const anon = await fetch(`${t.host.url}/metrics`);
    expect(anon.status).toBe(401);
    const res = await fetch(`${t.host.url}/metrics`, { headers: { 'x-fengyu-token': t.host.token } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/plain');
    const text = await res.text();
    for (const name of ['fengyu_bg_tasks_dispatched_total', 'fengyu_bg_tasks_rejected_total', 'fengyu_bg_task_queue_wait_seconds', 'fengyu_bg_queue_inqueue', 'fengyu_bg_queue_oldest_wait_ms']) {
      expect(text).toContain(`# TYPE ${name} `);
    }
    expect(text).toMatch(/fengyu_bg_tasks_dispatched_total\{priority="normal"\} [1-9]/);
    expect(text).toContain('fengyu_bg_task_queue_wait_seconds_bucket{le="0.001",priority="interactive",outcome="executed"}');
    expect(text).toContain('process_cpu_user_seconds_total');
    expect(text).toContain('nodejs_heap_size_used_bytes');
    // a Prometheus scraper presents the token as a bearer token
    const bearer = await fetch(`${t.host.url}/metrics`, { headers: { authorization: `Bearer ${t.host.token}` } });
    expect(bearer.status).toBe(200);
    expect(await bearer.text()).toContain('fengyu_bg_queue_inqueue');
    expect((await fetch(`${t.host.url}/metrics`, { headers: { authorization: 'Bearer wrong-token-000000000000' } })).status).toBe(401);
    const ours = [...text.matchAll(/^# TYPE (fengyu_\S+)/gm)].map((m) => m[1]).sort();
    expect(ours).toEqual(['fengyu_bg_queue_inqueue', 'fengyu_bg_queue_oldest_wait_ms', 'fengyu_bg_task_queue_wait_seconds', 'fengyu_bg_tasks_dispatched_total', 'fengyu_bg_tasks_rejected_total']);
  });
});
