import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerBody } from '../../src/cli/inbox-commands';
import { startTestHost, type TestHost } from '../support/host';
import { until } from '../tasks/helpers';

/**
 * The inbox over real HTTP and SSE: background tasks whose run reaches a gate wait in the inbox
 * (task `waiting`, slot given back) and go on when answered there; manual runs' gates are items
 * too, answered there or on the run page alike; owner scoping, bad bodies and second answers are
 * localized 4xx; expiry (by the host's clock) fails the step `gate_expired`.
 */

let t: TestHost;
let offset = 0;
let noteFlow: string;
let bob: string;
const frames: Array<{ type: string; data: any }> = [];
let es: EventSource;

async function publish(name: string, steps: unknown[]): Promise<string> {
  const made = await t.api('POST', '/api/workflows', { name, inputSchema: { type: 'object', properties: {} }, plan: { steps } });
  expect(made.status, JSON.stringify(made.body)).toBe(200);
  const pub = await t.api('POST', `/api/workflows/${made.body.id}/publish`, { revision: made.body.revision });
  expect(pub.status, JSON.stringify(pub.body)).toBe(200);
  return made.body.id as string;
}

async function task(workflowId: string): Promise<string> {
  const res = await t.api('POST', '/api/agent/tasks', { workflowId, permissionMode: 'ask' });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  return res.body.id as string;
}

const taskOf = async (id: string) => (await t.api('GET', `/api/agent/tasks/${id}`)).body;
const inbox = async (token?: string) => (await t.api('GET', '/api/inbox', undefined, token ? { 'x-fengyu-token': token } : {})).body;
const itemOfRun = async (runId: string) => ((await inbox()).items as any[]).find((i) => i.runId === runId);

beforeAll(async () => {
  t = await startTestHost({ clock: { now: () => Date.now() + offset } });
  noteFlow = await publish('Notes', [{ id: 'note', title: 'Write the note', tool: 'write_note', arguments: { text: 'hello' } }]);
  bob = (await t.api('POST', '/api/owners', { name: 'bob-inbox' })).body.token as string;
  es = new EventSource(`${t.host.url}/api/inbox/stream?token=${encodeURIComponent(t.host.token)}`);
  for (const type of ['inbox_added', 'inbox_removed']) es.addEventListener(type, (m: MessageEvent) => frames.push({ type, data: JSON.parse(m.data) }));
  await new Promise<void>((resolve, reject) => {
    es.onopen = () => resolve();
    es.onerror = () => reject(new Error('inbox stream did not open'));
  });
});

afterAll(async () => {
  es?.close();
  await t?.close();
});

describe('a background task that reaches a gate', () => {
  it('waits in the inbox, gives its slot back, and completes once answered there', async () => {
    const id = await task(noteFlow);
    const waiting = await until(async () => {
      const s = await taskOf(id);
      return s.state === 'waiting' ? s : undefined;
    }, 'the task to wait');
    const cap = (await t.api('GET', '/api/agent/tasks/capacity')).body;
    expect(cap.ownedRunning).toBe(0);
    const item = await itemOfRun(waiting.runId);
    expect(item).toMatchObject({ kind: 'step_approval', stepId: 'note', title: 'Write the note', workflowId: noteFlow, workflowName: 'Notes', trigger: 'task' });
    expect(Date.parse(item.expiresAt) - Date.parse(item.createdAt)).toBe(24 * 3600 * 1000);
    expect(item.detail).toMatchObject({ tool: 'write_note', effect: 'write' });
    await until(() => frames.some((f) => f.type === 'inbox_added' && f.data.item.id === item.id), 'inbox_added');
    // nothing ran yet
    expect(t.tools.calls.get('write_note') ?? 0).toBe(0);

    // another owner sees nothing and cannot answer it (404, no existence leak)
    expect((await inbox(bob)).items).toEqual([]);
    const foreign = await t.api('POST', `/api/inbox/${item.id}`, {}, { 'x-fengyu-token': bob });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('inbox_item_not_found');
    // a body that is none of §3's shapes: 400, and the gate stays
    const bad = await t.api('POST', `/api/inbox/${item.id}`, { decision: 'maybe' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_approval');
    expect((await itemOfRun(waiting.runId))?.id).toBe(item.id);

    const ok = await t.api('POST', `/api/inbox/${item.id}`, { decision: 'approve' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toMatchObject({ id: item.id, runId: waiting.runId, outcome: 'answered' });
    const done = (await t.api('GET', `/api/agent/tasks/${id}/output?timeoutMs=20000`)).body;
    expect(done.state, JSON.stringify(done)).toBe('completed');
    expect(t.tools.calls.get('write_note')).toBe(1);
    await until(() => frames.some((f) => f.type === 'inbox_removed' && f.data.id === item.id && f.data.outcome === 'answered'), 'inbox_removed');
    expect(await itemOfRun(waiting.runId)).toBeUndefined();

    // a second answer: 409, localized
    const again = await t.api('POST', `/api/inbox/${item.id}`, {}, { 'accept-language': 'zh-CN' });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('inbox_item_settled');
    expect(again.body.error.message).toContain('收件箱条目');
  });

  it('a rejected step fails the task with the reason', async () => {
    const id = await task(noteFlow);
    const s = await until(async () => {
      const x = await taskOf(id);
      return x.state === 'waiting' ? x : undefined;
    }, 'the task to wait');
    const item = await until(() => itemOfRun(s.runId), 'the item');
    expect((await t.api('POST', `/api/inbox/${item.id}`, { decision: 'reject', reason: 'not today' })).status).toBe(200);
    const done = (await t.api('GET', `/api/agent/tasks/${id}/output?timeoutMs=20000`)).body;
    expect(done.state).toBe('failed');
    const run = (await t.api('GET', `/api/agent/runs/${s.runId}`)).body;
    expect(JSON.stringify(run.executions)).toContain('not today');
  });

  it('expires after 24 hours by the host clock: the step fails gate_expired', async () => {
    const id = await task(noteFlow);
    const s = await until(async () => {
      const x = await taskOf(id);
      return x.state === 'waiting' ? x : undefined;
    }, 'the task to wait');
    const item = await until(() => itemOfRun(s.runId), 'the item');
    expect(await t.host.ctx.inbox.sweepExpired()).toBe(0);
    offset += 24 * 3600 * 1000 + 1000;
    expect(await t.host.ctx.inbox.sweepExpired()).toBe(1);
    const done = (await t.api('GET', `/api/agent/tasks/${id}/output?timeoutMs=20000`)).body;
    expect(done.state).toBe('failed');
    const run = (await t.api('GET', `/api/agent/runs/${s.runId}`)).body;
    expect(JSON.stringify(run.executions)).toContain('gate_expired');
    await until(() => frames.some((f) => f.type === 'inbox_removed' && f.data.id === item.id && f.data.outcome === 'expired'), 'expired frame');
    const late = await t.api('POST', `/api/inbox/${item.id}`, {});
    expect(late.status).toBe(409);
  });
});

describe('schedules and webhook deliveries wait too', () => {
  let gated: string;
  const waitingOf = (pred: (t: any) => boolean) =>
    until(async () => ((await t.api('GET', '/api/agent/tasks?limit=50')).body.items as any[]).find((x) => pred(x) && x.state === 'waiting'), 'a waiting task');

  beforeAll(async () => {
    gated = await publish('Gated notes', [{ id: 'note', title: 'Gated note', tool: 'write_note', arguments: { text: 'g' }, requiresApproval: true }]);
  });

  it('keeps the rule for ask: a schedule or trigger with an uncovered write step is refused at creation', async () => {
    const s = await t.api('POST', '/api/agent/schedules', { workflowId: noteFlow, permissionMode: 'ask', recurrence: { kind: 'daily', time: '09:00', timeZone: 'UTC' } });
    expect(s.body.error?.code).toBe('schedule_needs_unattended_mode');
    const w = await t.api('POST', `/api/workflows/${noteFlow}/webhooks`, { permissionMode: 'ask' });
    expect(w.body.error?.code).toBe('trigger_needs_unattended_mode');
  });

  it('a scheduled fire (approve-for-me) whose step requires approval waits in the inbox and runs once answered', async () => {
    const s = await t.api('POST', '/api/agent/schedules', { workflowId: gated, permissionMode: 'approve-for-me', runImmediately: true, recurrence: { kind: 'daily', time: '09:00', timeZone: 'UTC' } });
    expect(s.status, JSON.stringify(s.body)).toBe(201);
    const task = await waitingOf((x) => x.scheduleId === s.body.id);
    expect(task.kind).toBe('workflow-schedule');
    const item = await until(() => itemOfRun(task.runId), 'the item');
    expect(item).toMatchObject({ trigger: 'schedule', workflowName: 'Gated notes', stepId: 'note' });
    expect((await t.api('POST', `/api/inbox/${item.id}`, {})).status).toBe(200);
    expect((await t.api('GET', `/api/agent/tasks/${task.id}/output?timeoutMs=20000`)).body.state).toBe('completed');
    await t.api('DELETE', `/api/agent/schedules/${s.body.id}`);
  });

  it('a webhook delivery whose step requires approval waits in the inbox and runs once answered', async () => {
    const made = await t.api('POST', `/api/workflows/${gated}/webhooks`, { permissionMode: 'approve-for-me' });
    expect(made.status, JSON.stringify(made.body)).toBe(201);
    const res = await fetch(`${t.host.url}/api/workflow-hooks/${made.body.trigger.id}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-fengyu-webhook-secret': made.body.secret }, body: '{}' });
    expect(res.status).toBe(202);
    const { taskId } = (await res.json()) as { taskId: string };
    const task = await waitingOf((x) => x.id === taskId);
    const item = await until(() => itemOfRun(task.runId), 'the item');
    expect(item).toMatchObject({ trigger: 'webhook', kind: 'step_approval' });
    expect((await t.api('POST', `/api/inbox/${item.id}`, { decision: 'approve' })).status).toBe(200);
    expect((await t.api('GET', `/api/agent/tasks/${taskId}/output?timeoutMs=20000`)).body.state).toBe('completed');
  });
});

describe('gates of runs started by hand', () => {
  const plan = { steps: [{ id: 'a', tool: 'echo', arguments: { text: 'x' } }] };

  it('a plan gate is an item (no expiry); answered on the run page, it leaves the inbox', async () => {
    const runId = (await t.api('POST', '/api/agent/run', { goal: 'echo once', workflow: plan })).body.runId;
    const item = await until(() => itemOfRun(runId), 'the plan item');
    expect(item).toMatchObject({ kind: 'plan_approval', trigger: 'manual', title: 'echo once', plan: { steps: [{ id: 'a' }] } });
    expect(item.expiresAt).toBeUndefined();
    expect((await t.api('POST', `/api/agent/${runId}/approve`, {})).status).toBe(200);
    await until(() => frames.some((f) => f.type === 'inbox_removed' && f.data.id === item.id && f.data.outcome === 'answered'), 'removed');
    expect((await t.api('POST', `/api/inbox/${item.id}`, {})).status).toBe(409);
  });

  it('a plan rejected in the inbox cancels the run; a cancelled run takes its item away', async () => {
    const r1 = (await t.api('POST', '/api/agent/run', { workflow: plan })).body.runId;
    const i1 = await until(() => itemOfRun(r1), 'item 1');
    expect((await t.api('POST', `/api/inbox/${i1.id}`, { decision: 'reject' })).status).toBe(200);
    await until(async () => (await t.api('GET', `/api/agent/runs/${r1}`)).body.status === 'cancelled', 'cancelled run');
    const r2 = (await t.api('POST', '/api/agent/run', { workflow: plan })).body.runId;
    const i2 = await until(() => itemOfRun(r2), 'item 2');
    await t.api('POST', `/api/agent/${r2}/cancel`);
    await until(() => frames.some((f) => f.type === 'inbox_removed' && f.data.id === i2.id && f.data.outcome === 'cancelled'), 'cancelled frame');
    expect((await t.api('POST', `/api/inbox/${i2.id}`, {})).body.error.code).toBe('inbox_item_settled');
  });

  it('refuses a malformed cursor and an unknown item', async () => {
    expect((await t.api('GET', '/api/inbox?cursor=bm9wZQ')).status).toBe(400);
    expect((await t.api('POST', '/api/inbox/nope', {})).status).toBe(404);
  });
});

describe('the CLI', () => {
  const root = join(import.meta.dirname, '../../../..');
  function fengyu(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [join(root, 'bin/fengyu.mjs'), ...args], { cwd: root, env: { ...process.env, FENGYU_HOME: t.home, FENGYU_LOG_LEVEL: 'silent' } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });
  }

  it('answerBody takes exactly one flag, and --values must be a JSON object', () => {
    expect(answerBody({ approve: true })).toEqual({ decision: 'approve' });
    expect(answerBody({ reject: true })).toEqual({ decision: 'reject' });
    expect(answerBody({ reject: 'no' })).toEqual({ decision: 'reject', reason: 'no' });
    expect(answerBody({ values: '{"a":1}' })).toEqual({ values: { a: 1 } });
    expect(() => answerBody({ approve: true, reject: true })).toThrow(/exactly one/);
    expect(() => answerBody({})).toThrow(/exactly one/);
    expect(() => answerBody({ values: '[1]' })).toThrow(/JSON object/);
    expect(() => answerBody({ values: 'nope' })).toThrow(/JSON object/);
  });

  it('fengyu inbox lists the items; fengyu answer --approve answers one; a second answer fails', { timeout: 180_000 }, async () => {
    const id = await task(noteFlow);
    const s = await until(async () => {
      const x = await taskOf(id);
      return x.state === 'waiting' ? x : undefined;
    }, 'the task to wait');
    const item = await until(() => itemOfRun(s.runId), 'the item');
    const list = await fengyu(['inbox']);
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).toContain(item.id);
    expect(list.stdout).toContain('step_approval  task  Notes  Write the note [note]');
    const ok = await fengyu(['answer', item.id, '--approve']);
    expect(ok.status, ok.stderr).toBe(0);
    expect(ok.stdout).toContain(`answered ${item.id}`);
    expect((await t.api('GET', `/api/agent/tasks/${id}/output?timeoutMs=20000`)).body.state).toBe('completed');
    const again = await fengyu(['answer', item.id, '--reject', 'late']);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain('inbox_item_settled');
  });
});
