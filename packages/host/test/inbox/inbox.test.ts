import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EventSource } from 'eventsource';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerBody } from '../../src/cli/inbox-commands';
import { answerHint, askValues, fieldLine, fieldValue } from '../../src/cli/input-prompt';
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
    // another owner cannot approve a run live on this host (answered from memory): 404, the gate stays
    const foreign = await t.api('POST', `/api/agent/${runId}/approve`, {}, { 'x-fengyu-token': bob });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('run_not_found');
    expect((await t.api('GET', `/api/agent/runs/${runId}`)).body.status).toBe('awaiting_plan_approval');
    expect((await t.api('POST', `/api/agent/${runId}/approve`, {})).status).toBe(200);
    await until(() => frames.some((f) => f.type === 'inbox_removed' && f.data.id === item.id && f.data.outcome === 'answered'), 'removed');
    expect((await t.api('POST', `/api/inbox/${item.id}`, {})).status).toBe(409);
    // the item was settled in the approval's own commit (its row says so after the run ended)
    await until(async () => (await t.api('GET', `/api/agent/runs/${runId}`)).body.status === 'completed', 'completed run');
    const row = await t.host.ctx.db.selectFrom('inbox_items' as never).selectAll().where('id' as never, '=', item.id as never).executeTakeFirst();
    expect(row).toMatchObject({ state: 'answered' });
    expect((row as { settled_at: string | null }).settled_at).toBeTruthy();
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

describe('input steps', () => {
  const form = { type: 'object', properties: { discount: { type: 'number', title: 'Discount' }, note: { type: 'string', maxLength: 5 } }, required: ['discount'] };
  const askThenUse = (extra: Record<string, unknown> = {}) => ({
    steps: [
      { id: 'ask', kind: 'input', title: 'Approve the discount', form, ...extra },
      { id: 'big', kind: 'condition', dependsOn: ['ask'], cases: [{ name: 'yes', when: { all: [{ left: '{{node.ask.result.discount}}', op: 'gt', right: 10 }] } }] },
      { id: 'say', tool: 'echo', arguments: { value: '{{node.ask.result.discount}}', text: 'note {{node.ask.result.note}}' }, dependsOn: ['big:yes'] },
    ],
  });
  const start = async (plan: unknown) => {
    const res = await t.api('POST', '/api/agent/run', { workflow: plan, config: { planApproval: false } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.runId as string;
  };
  const runOf = async (runId: string) => (await t.api('GET', `/api/agent/runs/${runId}`)).body;
  const settled = (runId: string) => until(async () => ((r) => (['completed', 'failed', 'cancelled'].includes(r.status) ? r : undefined))(await runOf(runId)), `run ${runId} to end`);

  it('waits awaiting_input with its item; bad values list every field and the gate stays; the values feed later steps', async () => {
    const runId = await start(askThenUse());
    const requested = await t.waitFor(runId, 'input_requested');
    expect(requested.data).toMatchObject({ stepId: 'ask', title: 'Approve the discount', form });
    expect((await runOf(runId)).status).toBe('awaiting_input');
    const item = await until(() => itemOfRun(runId), 'the input item');
    expect(item).toMatchObject({ id: requested.data.gateId, kind: 'input', stepId: 'ask', title: 'Approve the discount', form, trigger: 'manual', expiresAt: requested.data.expiresAt });
    // the default wait: 7 days from when the gate opened
    expect(Date.parse(item.expiresAt) - Date.parse(item.createdAt)).toBe(7 * 24 * 3600 * 1000);

    const bad = await t.api('POST', `/api/agent/${runId}/input`, { values: { discount: 'ten', note: 'far too long', extra: 1 } }, { 'accept-language': 'zh-CN' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('input_values_invalid');
    expect(bad.body.error.message).toContain('输入仍在等待');
    expect(bad.body.error.details.map((d: any) => d.field).sort()).toEqual(['values.discount', 'values.extra', 'values.note']);
    // each field's message in the caller's language
    expect(bad.body.error.details.find((d: any) => d.field === 'values.note').message).toBe('字段“note”最多 5 个字符。');
    const missing = await t.api('POST', `/api/agent/${runId}/input`, { values: {} });
    expect(missing.body.error.details.map((d: any) => d.field)).toEqual(['values.discount']);
    expect((await t.api('POST', `/api/agent/${runId}/input`, { discount: 1 })).body.error.code).toBe('invalid_request');
    // another owner's run is a 404; an approve is no answer to an input
    const foreign = await t.api('POST', `/api/agent/${runId}/input`, { values: { discount: 20 } }, { 'x-fengyu-token': bob });
    expect(foreign.status).toBe(404);
    expect(foreign.body.error.code).toBe('run_not_found');
    expect((await t.api('POST', `/api/agent/${runId}/approve`, {})).status).toBe(409);
    expect((await runOf(runId)).status).toBe('awaiting_input');
    expect((await itemOfRun(runId))?.id).toBe(item.id);

    const ok = await t.api('POST', `/api/agent/${runId}/input`, { values: { discount: 20, note: 'vip' } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    expect(ok.body).toEqual({ runId, answered: { gateId: item.id, kind: 'input' } });
    const run = await settled(runId);
    expect(run.status).toBe('completed');
    const byStep = new Map(run.executions.map((e: any) => [e.stepId, e]));
    expect((byStep.get('ask') as any).result).toEqual({ discount: 20, note: 'vip' });
    expect((byStep.get('big') as any).result).toEqual({ branch: 'yes' });
    expect((byStep.get('say') as any).result).toMatchObject({ echoed: 20, args: { text: 'note vip' } });
    expect(run.events.some((e: any) => e.type === 'input_received' && e.outcome === 'answered')).toBe(true);
    await until(() => frames.some((f) => f.type === 'inbox_removed' && f.data.id === item.id && f.data.outcome === 'answered'), 'removed');
    // a second answer, and a run that never asked: 409
    const again = await t.api('POST', `/api/agent/${runId}/input`, { values: { discount: 1 } });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('no_pending_input');
    expect((await t.api('POST', `/api/inbox/${item.id}`, { values: { discount: 1 } })).status).toBe(409);
  });

  it('expires by the host clock: fails gate_expired, or completes with its defaults', async () => {
    const failing = await start(askThenUse({ timeoutMs: 60_000 }));
    const defaulted = await start(askThenUse({ timeoutMs: 60_000, onTimeout: 'default', defaults: { discount: 50, note: 'dflt' } }));
    const items = await Promise.all([failing, defaulted].map((r) => until(() => itemOfRun(r), 'an input item')));
    for (const i of items) expect(Date.parse(i.expiresAt) - Date.parse(i.createdAt)).toBe(60_000);
    offset += 61_000;
    expect(await t.host.ctx.inbox.sweepExpired()).toBeGreaterThanOrEqual(2);
    const failed = await settled(failing);
    expect(failed.status).toBe('failed');
    expect(failed.executions.find((e: any) => e.stepId === 'ask').error).toMatch(/^gate_expired: Nobody answered the input of step "ask"/);
    const done = await settled(defaulted);
    expect(done.status).toBe('completed');
    expect(done.executions.find((e: any) => e.stepId === 'say').result).toMatchObject({ echoed: 50, args: { text: 'note dflt' } });
    expect(done.events.some((e: any) => e.type === 'input_received' && e.outcome === 'defaulted')).toBe(true);
    for (const i of items) await until(() => frames.some((f) => f.type === 'inbox_removed' && f.data.id === i.id && f.data.outcome === 'expired'), 'expired frame');
  });

  it('a background task waits on an input and completes when answered through the inbox', async () => {
    const flow = await publish('Ask a discount', askThenUse().steps);
    const id = await task(flow);
    // the gate opens as the run begins: the task may wait before it records its run's id
    const waiting = await until(async () => ((s) => (s.state === 'waiting' && s.runId ? s : undefined))(await taskOf(id)), 'the task to wait');
    expect((await t.api('GET', '/api/agent/tasks/capacity')).body.ownedRunning).toBe(0);
    const item = await until(() => itemOfRun(waiting.runId), 'the input item');
    expect(item).toMatchObject({ kind: 'input', trigger: 'task', workflowName: 'Ask a discount', form });
    const bad = await t.api('POST', `/api/inbox/${item.id}`, { values: { discount: 'x' } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([expect.objectContaining({ code: 'input_value_not_number', field: 'values.discount', stepId: 'ask' })]);
    expect((await t.api('POST', `/api/inbox/${item.id}`, { decision: 'approve' })).body.error.code).toBe('invalid_request');
    expect((await t.api('POST', `/api/inbox/${item.id}`, { values: { discount: 30 } }, { 'x-fengyu-token': bob })).status).toBe(404);
    const ok = await t.api('POST', `/api/inbox/${item.id}`, { values: { discount: 30 } });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
    const done = (await t.api('GET', `/api/agent/tasks/${id}/output?timeoutMs=20000`)).body;
    expect(done.state, JSON.stringify(done)).toBe('completed');
    const run = await runOf(waiting.runId);
    // the field left out reads null (every field of the form is in the result)
    expect(run.executions.find((e: any) => e.stepId === 'ask').result).toEqual({ discount: 30, note: null });
    expect(run.executions.find((e: any) => e.stepId === 'say').result).toMatchObject({ echoed: 30, args: { text: 'note null' } });
  });

  it('refuses an input step in a loop body, naming the step', async () => {
    const res = await t.api('POST', '/api/agent/run', { workflow: { steps: [{ id: 'each', kind: 'forEach', items: [1], steps: [{ id: 'ask', kind: 'input', form }] }] } });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toEqual([expect.objectContaining({ code: 'input_in_foreach', stepId: 'ask' })]);
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

  it('reads a typed line as its field\'s type and shows how to answer elsewhere', async () => {
    const form = { type: 'object', properties: { n: { type: 'integer' }, ok: { type: 'boolean' }, tags: { type: 'array', items: { type: 'string' } }, who: { type: 'string', enum: ['a', 'b'] } }, required: ['n'] };
    expect(fieldValue({ type: 'integer' }, ' 12 ')).toBe(12);
    expect(fieldValue({ type: 'number' }, 'ten')).toBe('ten');
    expect(fieldValue({ type: 'boolean' }, 'yes')).toBe(true);
    expect(fieldValue({ type: 'array' }, 'x, y,,')).toEqual(['x', 'y']);
    expect(fieldValue({ type: 'string' }, '')).toBeUndefined();
    const lines = ['3', 'n', 'red, blue', ''];
    expect(await askValues(form, async () => lines.shift())).toEqual({ n: 3, ok: false, tags: ['red', 'blue'] });
    expect(fieldLine('who', form.properties.who, false)).toBe('who (one of a | b)');
    expect(answerHint('g1', form)).toContain(`fengyu answer g1 --values '{"n":0,"ok":false,"tags":[],"who":""}'`);
  });

  it('fengyu run shows an input request and how to answer it; fengyu answer --values answers it', { timeout: 180_000 }, async () => {
    const file = join(t.home, 'ask.json');
    writeFileSync(file, JSON.stringify({ steps: [{ id: 'ask', kind: 'input', title: 'Pick a number', form: { type: 'object', properties: { n: { type: 'integer', title: 'A number' } }, required: ['n'] } }, { id: 'use', tool: 'echo', arguments: { value: '{{node.ask.result.n}}' }, dependsOn: ['ask'] }] }));
    const child = spawn(process.execPath, [join(root, 'bin/fengyu.mjs'), 'run', file, '--yes'], { cwd: root, env: { ...process.env, FENGYU_HOME: t.home, FENGYU_LOG_LEVEL: 'silent' } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
    const gateId = await until(() => /fengyu answer (\S+) --values/.exec(err)?.[1], 'the answer hint', 120_000);
    expect(err).toContain('Step "ask" asks: Pick a number');
    expect(err).toContain('n (integer, required): A number');
    const bad = await fengyu(['answer', gateId, '--values', '{"n": "x"}']);
    expect(bad.status).toBe(1);
    expect(bad.stderr).toContain('input_values_invalid');
    const ok = await fengyu(['answer', gateId, '--values', '{"n": 42}']);
    expect(ok.status, ok.stderr).toBe(0);
    expect(await exited).toBe(0);
    expect(out).toContain('"echoed": 42');
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
