import { request as httpRequest } from 'node:http';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';

/** Webhook triggers and deliveries over real HTTP on loopback, with the real task executor. */

let t: TestHost;
let sandboxed = false;
const slowTasks: string[] = [];

beforeAll(async () => {
  t = await startTestHost();
  // the plugins domain sets the posture; the tests switch it
  const real = t.host.ctx.posture;
  t.host.ctx.posture = () => (sandboxed ? { mode: 'sandboxed', backend: 'test' } : real());
});
afterAll(async () => {
  for (const id of slowTasks) await t.api('POST', `/api/agent/tasks/${id}/kill`);
  await t?.close();
});

const schema = {
  type: 'object',
  required: ['text'],
  properties: { text: { type: 'string' }, count: { type: 'number' }, tag: { type: 'string' } },
};
const plan = { steps: [{ id: 'say', tool: 'echo', arguments: { value: 'got {{inputs.text}}|{{inputs.tag}}' } }] };
const textPlan = { steps: [{ id: 'say', tool: 'echo', arguments: { value: '{{inputs.text}}' } }] };
const slowPlan = { steps: [{ id: 'wait', tool: 'slow', arguments: { ms: 600_000 } }] };
const failPlan = { steps: [{ id: 'boom', tool: 'fail', arguments: {} }] };

async function published(inputSchema: unknown = schema, steps: unknown = plan): Promise<string> {
  const def = await t.api('POST', '/api/workflows', { name: 'Hooked', description: 'Started by a webhook', inputSchema, plan: steps });
  expect(def.status, JSON.stringify(def.body)).toBe(200);
  const pub = await t.api('POST', `/api/workflows/${def.body.id}/publish`, { revision: def.body.revision });
  expect(pub.status, JSON.stringify(pub.body)).toBe(200);
  return def.body.id;
}

async function trigger(workflowId: string, body: Record<string, unknown> = {}) {
  const res = await t.api('POST', `/api/workflows/${workflowId}/webhooks`, { permissionMode: 'full-access', defaults: { tag: 'd' }, ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body as { trigger: { id: string; state: string }; secret: string };
}

/** A delivery as another program sends it: no host token. */
async function deliver(triggerId: string, secret: string | undefined, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${t.host.url}/api/workflow-hooks/${triggerId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(secret !== undefined ? { 'x-fengyu-webhook-secret': secret } : {}), ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined, headers: res.headers };
}

async function audit(workflowId: string, triggerId: string, query = '') {
  const res = await t.api('GET', `/api/workflows/${workflowId}/webhooks/${triggerId}/deliveries${query}`);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body as { items: Array<Record<string, any>>; nextCursor?: string };
}

async function until<T>(fn: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** The background tasks a trigger started (newest first). */
async function tasksOf(triggerId: string): Promise<Array<Record<string, any>>> {
  const res = await t.api('GET', '/api/agent/tasks?limit=200');
  return (res.body.items as Array<Record<string, any>>).filter((x) => x.triggerId === triggerId);
}

async function output(taskId: string): Promise<Record<string, any>> {
  const res = await t.api('GET', `/api/agent/tasks/${taskId}/output?timeoutMs=30000`);
  expect(res.status).toBe(200);
  return res.body;
}

describe('webhook triggers', () => {
  it('creates a trigger with a one-time secret kept only as its digest; lists, rotates and deletes it', async () => {
    const wf = await published();
    const { trigger: tr, secret } = await trigger(wf, { name: 'CI' });
    expect(secret).toMatch(/^fywh_[A-Za-z0-9_-]{43}$/);
    expect(tr).toMatchObject({ workflowId: wf, name: 'CI', defaults: { tag: 'd' }, permissionMode: 'full-access', state: 'active' });
    expect(tr).not.toHaveProperty('secret');
    const list = await t.api('GET', `/api/workflows/${wf}/webhooks`);
    expect(list.body.items.map((x: { id: string }) => x.id)).toEqual([tr.id]);
    expect(JSON.stringify(list.body)).not.toContain(secret);

    const db = new Database(join(t.home, 'fengyu.db'), { readonly: true });
    const row = db.prepare('select * from webhook_triggers where id = ?').get(tr.id) as Record<string, unknown>;
    db.close();
    expect(JSON.stringify(row)).not.toContain(secret);
    expect(row.secret_sha256).toMatch(/^[0-9a-f]{64}$/);

    expect((await deliver(tr.id, secret, { text: 'a' })).status).toBe(202);
    const rotated = await t.api('POST', `/api/workflows/${wf}/webhooks/${tr.id}/rotate`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(secret);
    const old = await deliver(tr.id, secret, { text: 'a' });
    expect(old.status).toBe(401);
    expect(old.body.error.code).toBe('webhook_secret_invalid');
    expect((await deliver(tr.id, rotated.body.secret, { text: 'a' })).status).toBe(202);

    const del = await t.api('DELETE', `/api/workflows/${wf}/webhooks/${tr.id}`);
    expect(del.status).toBe(200);
    const gone = await deliver(tr.id, rotated.body.secret, { text: 'a' });
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('webhook_trigger_not_found');
    expect((await t.api('GET', `/api/workflows/${wf}/webhooks`)).body.items).toEqual([]);
    expect((await t.api('DELETE', `/api/workflows/${wf}/webhooks/${tr.id}`)).status).toBe(404);
  });

  it('refuses bad trigger requests with the field named, before creating anything', async () => {
    const wf = await published();
    const noMode = await t.api('POST', `/api/workflows/${wf}/webhooks`, { defaults: {} });
    expect(noMode.status).toBe(400);
    expect(noMode.body.error.message).toContain('permissionMode');
    const badMode = await t.api('POST', `/api/workflows/${wf}/webhooks`, { permissionMode: 'yolo' });
    expect(badMode.status).toBe(400);
    const undeclared = await t.api('POST', `/api/workflows/${wf}/webhooks`, { permissionMode: 'full-access', defaults: { nope: 1 } });
    expect(undeclared.status).toBe(400);
    expect(undeclared.body.error).toMatchObject({ code: 'webhook_defaults_invalid' });
    expect(undeclared.body.error.message).toContain('defaults.nope');
    const wrongType = await t.api('POST', `/api/workflows/${wf}/webhooks`, { permissionMode: 'full-access', defaults: { count: 'x' } }, { 'accept-language': 'zh-CN' });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.message).toContain('defaults.count');
    expect(wrongType.body.error.message).toContain('触发器默认值无效');
    expect((await t.api('GET', `/api/workflows/${wf}/webhooks`)).body.items).toEqual([]);

    const draft = await t.api('POST', '/api/workflows', { name: 'Draft', description: '', inputSchema: schema, plan });
    const unpublished = await t.api('POST', `/api/workflows/${draft.body.id}/webhooks`, { permissionMode: 'full-access' });
    expect(unpublished.status).toBe(409);
    expect(unpublished.body.error.code).toBe('workflow_not_published');
    expect((await t.api('POST', '/api/workflows/nope/webhooks', { permissionMode: 'full-access' })).status).toBe(404);
  });

  it('refuses a workflow with picker-file inputs or automatic shared directories, with guidance', async () => {
    const files = await published({ type: 'object', properties: { report: { type: 'string', format: 'fengyu-file' }, text: { type: 'string' } } }, textPlan);
    const res = await t.api('POST', `/api/workflows/${files}/webhooks`, { permissionMode: 'full-access' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('webhook_inputs_unbindable');
    expect(res.body.error.message).toContain('report');
    expect(res.body.error.message).toContain('create a schedule: there you pick the file once');
    expect(res.body.error.message).not.toMatch(/picker|shared director|stable identifier/);
    expect(res.body.error.details[0]).toMatchObject({ field: 'report', code: 'webhook_input_file' });

    const shared = await published({ type: 'object', properties: { work: { type: 'string', 'x-fengyu-auto': 'shared-directory' }, text: { type: 'string' } } }, textPlan);
    const res2 = await t.api('POST', `/api/workflows/${shared}/webhooks`, { permissionMode: 'full-access' });
    expect(res2.status).toBe(400);
    expect(res2.body.error.details[0]).toMatchObject({ field: 'work', code: 'webhook_input_shared_directory' });
  });

  it('refuses under "ask" a workflow with a step that would wait for an approval, naming the step', async () => {
    const def = await t.api('POST', '/api/workflows', { name: 'Writes', description: '', inputSchema: schema, plan: { steps: [{ id: 'note', tool: 'write_note', arguments: { text: '{{inputs.text}}' } }] } });
    await t.api('POST', `/api/workflows/${def.body.id}/publish`, { revision: def.body.revision });
    const res = await t.api('POST', `/api/workflows/${def.body.id}/webhooks`, { permissionMode: 'ask' });
    expect(res.status).toBe(400);
    expect(res.body.error.code).toBe('trigger_needs_unattended_mode');
    expect(res.body.error.message).toContain('"note"');
    expect((await t.api('GET', `/api/workflows/${def.body.id}/webhooks`)).body.items).toEqual([]);
    expect((await t.api('POST', `/api/workflows/${def.body.id}/webhooks`, { permissionMode: 'approve-for-me' })).status).toBe(201);
    // a read-only workflow is fine under ask
    const wf = await published();
    expect((await t.api('POST', `/api/workflows/${wf}/webhooks`, { permissionMode: 'ask' })).status).toBe(201);
  });

  it('is owner-scoped: another owner sees 404 for the workflow and its triggers', async () => {
    const wf = await published();
    const { trigger: tr } = await trigger(wf);
    const other = await t.api('POST', '/api/owners', { name: 'bob' });
    const bob = { 'x-fengyu-token': other.body.token };
    expect((await t.api('GET', `/api/workflows/${wf}/webhooks`, undefined, bob)).status).toBe(404);
    expect((await t.api('POST', `/api/workflows/${wf}/webhooks/${tr.id}/rotate`, undefined, bob)).status).toBe(404);
    expect((await t.api('DELETE', `/api/workflows/${wf}/webhooks/${tr.id}`, undefined, bob)).status).toBe(404);
    expect((await t.api('GET', `/api/workflows/${wf}/webhooks/${tr.id}/deliveries`, undefined, bob)).status).toBe(404);
    expect((await t.api('POST', `/api/workflows/${wf}/webhooks`, { permissionMode: 'full-access' }, bob)).status).toBe(404);
  });
});

describe('webhook deliveries', () => {
  it('starts an interactive workflow-webhook task whose inputs are the defaults overridden by the body', async () => {
    const wf = await published();
    const { trigger: tr, secret } = await trigger(wf);
    const res = await deliver(tr.id, secret, { text: 'hello', count: 2 });
    expect(res.status, JSON.stringify(res.body)).toBe(202);
    expect(res.body).toMatchObject({ duplicate: false });
    expect(Object.keys(res.body).sort()).toEqual(['deliveryId', 'duplicate', 'taskId']);
    const done = await output(res.body.taskId);
    expect(done).toMatchObject({ kind: 'workflow-webhook', priority: 'interactive', workflowId: wf, triggerId: tr.id, state: 'completed' });
    expect(done.output.text).toContain('got hello|d');
    const run = (await t.api('GET', `/api/agent/runs/${done.runId}`)).body;
    expect(run.config).toMatchObject({ permissionMode: 'full-access' });
    const override = await deliver(tr.id, secret, { text: 'x', tag: 'body' });
    expect(override.status).toBe(202);
    expect((await output(override.body.taskId)).output.text).toContain('got x|body');
    const rows = await until(
      () => audit(wf, tr.id),
      (r) => r.items.every((i) => i.state === 'COMPLETED'),
    );
    expect(rows.items.map((r) => r.taskId)).toEqual([override.body.taskId, res.body.taskId]);
  });

  it('answers each refusal exactly: 401, 404, 400 naming the field, 413, 403', async () => {
    const wf = await published();
    const { trigger: tr, secret } = await trigger(wf);

    const missing = await deliver(tr.id, undefined, { text: 'a' });
    expect(missing.status).toBe(401);
    expect(missing.body.error.code).toBe('webhook_secret_invalid');
    const wrong = await deliver(tr.id, `${secret}x`, { text: 'a' });
    expect(wrong.status).toBe(401);
    // the host token is not a webhook secret
    expect((await deliver(tr.id, t.host.token, { text: 'a' })).status).toBe(401);
    expect((await deliver('wh_unknown', secret, { text: 'a' })).status).toBe(404);

    const undeclared = await deliver(tr.id, secret, { text: 'a', extra: 1 });
    expect(undeclared.status).toBe(400);
    expect(undeclared.body.error.code).toBe('webhook_body_invalid');
    expect(undeclared.body.error.message).toContain('extra');
    const wrongType = await deliver(tr.id, secret, { text: 5 });
    expect(wrongType.status).toBe(400);
    expect(wrongType.body.error.message).toContain('text');
    const missingField = await deliver(tr.id, secret, {});
    expect(missingField.status).toBe(400);
    expect(missingField.body.error.message).toContain('text');
    const array = await deliver(tr.id, secret, [1]);
    expect(array.status).toBe(400);
    const notJson = await deliver(tr.id, secret, '{"text":');
    expect(notJson.status).toBe(400);
    expect(notJson.body.error.code).toBe('invalid_json');

    const longId = await deliver(tr.id, secret, { text: 'a' }, { 'x-fengyu-event-id': 'e'.repeat(201) });
    expect(longId.status).toBe(400);
    expect(longId.body.error.code).toBe('webhook_event_id_invalid');
    expect((await deliver(tr.id, secret, { text: 'a' }, { 'x-fengyu-event-id': 'e'.repeat(200) })).status).toBe(202);
    // two headers are two ids, not one joined "a, b" id
    const twice = await rawPost(`/api/workflow-hooks/${tr.id}`, { 'x-fengyu-webhook-secret': secret, 'x-fengyu-event-id': ['evt-a', 'evt-b'] }, JSON.stringify({ text: 'a' }));
    expect(twice.status).toBe(400);
    expect(JSON.parse(twice.body).error.code).toBe('webhook_event_id_invalid');

    const big = await deliver(tr.id, secret, { text: 'a'.repeat(256 * 1024) });
    expect(big.status).toBe(413);
    expect(big.body.error.code).toBe('payload_too_large');
    expect(big.body.error.message).toContain('262144');

    // no Content-Length: the limit is enforced while the body streams in
    const chunked = await rawPost(`/api/workflow-hooks/${tr.id}`, { 'x-fengyu-webhook-secret': secret, 'transfer-encoding': 'chunked' }, JSON.stringify({ text: 'a'.repeat(300 * 1024) }), false);
    expect(chunked.status).toBe(413);
    expect(JSON.parse(chunked.body).error.message).toContain('262144');
    const plainText = await rawPost(`/api/workflow-hooks/${tr.id}`, { 'x-fengyu-webhook-secret': secret, 'content-type': 'text/plain' }, JSON.stringify({ text: 'a' }));
    expect(plainText.status).toBe(400);
    expect(JSON.parse(plainText.body).error.code).toBe('webhook_body_invalid');
    const nullBody = await rawPost(`/api/workflow-hooks/${tr.id}`, { 'x-fengyu-webhook-secret': secret, 'content-type': 'application/json' }, 'null');
    expect(nullBody.status).toBe(400);
    expect(JSON.parse(nullBody.body).error.details.map((d: { code: string }) => d.code)).toEqual(['webhook_body_not_object']);
    const empty = await rawPost(`/api/workflow-hooks/${tr.id}`, { 'x-fengyu-webhook-secret': secret }, '');
    expect(empty.status).toBe(400);
    expect(JSON.parse(empty.body).error.message).toContain('text');

    const host = await rawPost(`/api/workflow-hooks/${tr.id}`, { 'x-fengyu-webhook-secret': secret, host: 'evil.example:80' }, JSON.stringify({ text: 'a' }));
    expect(host.status).toBe(403);
    const origin = await deliver(tr.id, secret, { text: 'a' }, { origin: 'http://evil.example' });
    expect(origin.status).toBe(403);

    // a peer that is not loopback (the server only listens on loopback, so inject the address)
    const remote = await t.host.app.inject({ method: 'POST', url: `/api/workflow-hooks/${tr.id}`, remoteAddress: '192.168.1.20', headers: { host: '127.0.0.1', 'content-type': 'application/json', 'x-fengyu-webhook-secret': secret }, payload: { text: 'a' } });
    expect(remote.statusCode).toBe(403);
    expect(remote.json().error.code).toBe('webhook_peer_forbidden');

    // only the 200-character event id above was accepted
    expect(await tasksOf(tr.id)).toHaveLength(1);
    const rows = await audit(wf, tr.id);
    expect(rows.items).toHaveLength(1);
  });

  it('runs one task for 100 concurrent deliveries of one event id', async () => {
    const wf = await published();
    const { trigger: tr, secret } = await trigger(wf);
    const answers = await Promise.all(Array.from({ length: 100 }, () => deliver(tr.id, secret, { text: 'once' }, { 'x-fengyu-event-id': 'order-42' })));
    expect(answers.every((a) => a.status === 202)).toBe(true);
    expect(await tasksOf(tr.id)).toHaveLength(1);
    expect(new Set(answers.map((a) => a.body.taskId)).size).toBe(1);
    expect(new Set(answers.map((a) => a.body.deliveryId)).size).toBe(1);
    expect(answers.filter((a) => a.body.duplicate === false)).toHaveLength(1);
    // a later retry is still a duplicate; another event id is a new delivery
    const later = await deliver(tr.id, secret, { text: 'once' }, { 'x-fengyu-event-id': 'order-42' });
    expect(later.body).toMatchObject({ duplicate: true, taskId: answers[0]?.body.taskId });
    const other = await deliver(tr.id, secret, { text: 'twice' }, { 'x-fengyu-event-id': 'order-43' });
    expect(other.body.duplicate).toBe(false);
    expect(await tasksOf(tr.id)).toHaveLength(2);
    expect((await output(answers[0]?.body.taskId)).output.text).toContain('got once');
    const rows = await audit(wf, tr.id);
    expect(rows.items).toHaveLength(2);
    expect(rows.items.every((r) => r.idempotencyKeySupplied === true)).toBe(true);
    // event ids are scoped to the trigger
    const second = await trigger(wf);
    const elsewhere = await deliver(second.trigger.id, second.secret, { text: 'once' }, { 'x-fengyu-event-id': 'order-42' });
    expect(elsewhere.body.duplicate).toBe(false);
  });

  it('answers 429 with Retry-After when capacity is exhausted, releases the event id and keeps no secret input of the refused task', async () => {
    const wf = await published({ ...schema, properties: { ...schema.properties, pw: { type: 'string', format: 'password' } } }, slowPlan);
    const { trigger: tr, secret } = await trigger(wf);
    // fill the running slots and this owner's queue allowance with deliveries that wait, each sending a secret input
    let refused: Awaited<ReturnType<typeof deliver>> | undefined;
    let refusedEvent = '';
    for (let i = 0; i < 80 && !refused; i++) {
      const res = await deliver(tr.id, secret, { text: `fill${i}`, pw: `pw-fill-${i}` }, { 'x-fengyu-event-id': `evt-cap-${i}` });
      if (res.status === 202) slowTasks.push(res.body.taskId);
      else [refused, refusedEvent] = [res, `evt-cap-${i}`];
    }
    expect(refused?.status).toBe(429);
    expect(refused?.headers.get('retry-after')).toBe('1');
    expect(refused?.body.error).toMatchObject({ code: 'capacity_exhausted', details: { retryable: true, retryAfterSeconds: 1 } });
    // the vault holds the sealed value of each queued task (until its run starts) and of accepted tasks only: none of the refused one
    const holders = (await t.host.ctx.db.selectFrom('secrets').select('name').where('name', 'like', 'task:%').execute()).map((r) => (r.name as string).slice(5, -'/input/pw'.length));
    expect(holders.filter((id) => !slowTasks.includes(id))).toEqual([]);
    const queuedIds = (await tasksOf(tr.id)).filter((x) => x.state === 'queued').map((x) => x.id as string);
    expect(queuedIds.length).toBeGreaterThan(0);
    for (const id of queuedIds) expect(holders).toContain(id);
    // the refused event id was released: once a slot is free, its retry runs
    const queued = (await tasksOf(tr.id)).find((x) => x.state === 'queued');
    expect(queued).toBeDefined();
    expect((await t.api('POST', `/api/agent/tasks/${queued?.id}/kill`)).status).toBe(200);
    const retried = await deliver(tr.id, secret, { text: 'again' }, { 'x-fengyu-event-id': refusedEvent });
    expect(retried.status, JSON.stringify(retried.body)).toBe(202);
    expect(retried.body.duplicate).toBe(false);
    slowTasks.push(retried.body.taskId);
    const rows = await until(
      () => audit(wf, tr.id, '?limit=100'),
      (r) => r.items.some((i) => i.state === 'CANCELLED'),
    );
    expect(rows.items[0]).toMatchObject({ id: retried.body.deliveryId, state: 'QUEUED' });
    expect(rows.items[1]).toMatchObject({ state: 'FAILED', error: { code: 'capacity_exhausted' } });
    expect(rows.items.find((r) => r.taskId === queued?.id)?.state).toBe('CANCELLED');
    for (const id of slowTasks.splice(0)) await t.api('POST', `/api/agent/tasks/${id}/kill`);
  });

  it('keeps an audit row per delivery that follows the task and never holds the body, secret or event id', async () => {
    const wf = await published();
    const { trigger: tr, secret } = await trigger(wf);
    const a = await deliver(tr.id, secret, { text: 'BODY-MARKER-1' }, { 'x-fengyu-event-id': 'EVENT-MARKER-1' });
    const b = await deliver(tr.id, secret, { text: 'BODY-MARKER-2' });
    expect(a.status).toBe(202);
    const rows = await until(
      () => audit(wf, tr.id),
      (r) => r.items.every((i) => i.completedAt),
    );
    expect(rows.items.map((r) => r.state)).toEqual(['COMPLETED', 'COMPLETED']);
    const [rb, ra] = rows.items as Array<Record<string, any>>;
    expect(ra).toMatchObject({ id: a.body.deliveryId, taskId: a.body.taskId, idempotencyKeySupplied: true });
    expect(rb).toMatchObject({ id: b.body.deliveryId, idempotencyKeySupplied: false });
    expect(ra?.durationMs).toBeGreaterThanOrEqual(0);
    expect(Date.parse(ra?.completedAt)).toBeGreaterThanOrEqual(Date.parse(ra?.acceptedAt));
    expect(Object.keys(ra ?? {}).sort()).toEqual(['acceptedAt', 'completedAt', 'durationMs', 'id', 'idempotencyKeySupplied', 'state', 'taskId']);
    const text = JSON.stringify(rows);
    for (const marker of ['BODY-MARKER', 'EVENT-MARKER', secret]) expect(text).not.toContain(marker);

    // a failing workflow ends FAILED with the task's error; a killed one CANCELLED
    const failing = await published(schema, failPlan);
    const f = await trigger(failing);
    const fd = await deliver(f.trigger.id, f.secret, { text: 'x' });
    const fRows = await until(
      () => audit(failing, f.trigger.id),
      (r) => r.items[0]?.state === 'FAILED',
    );
    expect(fRows.items[0]).toMatchObject({ taskId: fd.body.taskId, error: { code: expect.any(String), message: expect.any(String) } });
    const slow = await published(schema, slowPlan);
    const s2 = await trigger(slow);
    const sd = await deliver(s2.trigger.id, s2.secret, { text: 'x' });
    expect((await t.api('POST', `/api/agent/tasks/${sd.body.taskId}/kill`)).status).toBe(200);
    const sRows = await until(
      () => audit(slow, s2.trigger.id),
      (r) => r.items[0]?.state === 'CANCELLED',
    );
    expect(sRows.items[0]?.completedAt).toBeDefined();

    const db = new Database(join(t.home, 'fengyu.db'), { readonly: true });
    const dump = JSON.stringify(db.prepare('select * from webhook_deliveries').all()) + JSON.stringify(db.prepare('select * from webhook_triggers').all());
    const claims = db.prepare('select event_sha256 from webhook_event_claims').all() as Array<{ event_sha256: string }>;
    db.close();
    for (const marker of ['BODY-MARKER', 'EVENT-MARKER', secret]) expect(dump).not.toContain(marker);
    for (const c2 of claims) expect(text).not.toContain(c2.event_sha256);
    expect(JSON.stringify(claims)).not.toContain('EVENT-MARKER');
  });

  it('pages the audit newest first, at most 100 per request', async () => {
    const wf = await published();
    const { trigger: tr, secret } = await trigger(wf);
    const ids: Array<string | undefined> = [];
    for (let i = 0; i < 105; i++) {
      const res = await deliver(tr.id, secret, { text: `n${i}` });
      // a delivery refused for capacity has its audit row too
      ids.push(res.status === 202 ? res.body.deliveryId : undefined);
    }
    const first = await audit(wf, tr.id, '?limit=100');
    expect(first.items).toHaveLength(100);
    expect(first.items).toHaveLength(100);
    if (ids[104]) expect(first.items[0]?.id).toBe(ids[104]);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await audit(wf, tr.id, `?limit=100&cursor=${first.nextCursor}`);
    expect(second.items).toHaveLength(5);
    const seen = [...first.items, ...second.items].map((r) => r.id);
    expect(new Set(seen).size).toBe(105);
    for (const id of ids) if (id) expect(seen).toContain(id);
    expect(second.nextCursor).toBeUndefined();
    expect((await t.api('GET', `/api/workflows/${wf}/webhooks/${tr.id}/deliveries?limit=101`)).status).toBe(400);
    expect((await t.api('GET', `/api/workflows/${wf}/webhooks/${tr.id}/deliveries?cursor=bogus`)).status).toBe(400);
  });

  it('pauses a trigger created while sandboxed when isolation is weakened, and resumes it when restored', async () => {
    const wf = await published();
    const plain = await trigger(wf);
    sandboxed = true;
    const { trigger: tr, secret } = await trigger(wf);
    sandboxed = false;
    try {
      const list = await t.api('GET', `/api/workflows/${wf}/webhooks`);
      const got = list.body.items.find((x: { id: string }) => x.id === tr.id);
      expect(got).toMatchObject({ state: 'paused', pausedReason: 'sandbox_weakened' });
      const refused = await deliver(tr.id, secret, { text: 'a' });
      expect(refused.status).toBe(409);
      expect(refused.body.error.code).toBe('webhook_trigger_paused');
      // a trigger created without the sandbox is not affected
      expect((await deliver(plain.trigger.id, plain.secret, { text: 'a' })).status).toBe(202);
    } finally {
      sandboxed = true;
    }
    const back = await t.api('GET', `/api/workflows/${wf}/webhooks`);
    expect(back.body.items.find((x: { id: string }) => x.id === tr.id).state).toBe('active');
    expect((await deliver(tr.id, secret, { text: 'a' })).status).toBe(202);
    sandboxed = false;
  });

  it('disables the triggers of a deleted workflow in the same transaction', async () => {
    const wf = await published();
    const { trigger: tr, secret } = await trigger(wf);
    expect((await t.api('DELETE', `/api/workflows/${wf}`)).status).toBe(200);
    const res = await deliver(tr.id, secret, { text: 'a' });
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('webhook_trigger_not_found');
    const db = new Database(join(t.home, 'fengyu.db'), { readonly: true });
    const row = db.prepare('select state from webhook_triggers where id = ?').get(tr.id) as { state: string };
    db.close();
    expect(row.state).toBe('disabled');
    expect((await t.api('GET', `/api/workflows/${wf}/webhooks`)).status).toBe(404);
  });
});

function rawPost(path: string, headers: Record<string, string | string[]>, body: string, withLength = true): Promise<{ status: number; body: string }> {
  const url = new URL(path, t.host.url);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', headers: { 'content-type': 'application/json', ...(withLength ? { 'content-length': Buffer.byteLength(body) } : {}), ...headers } }, (res) => {
      let data = '';
      res.on('data', (d) => (data += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: data }));
    });
    req.on('error', (err) => (err as NodeJS.ErrnoException).code === 'EPIPE' || (err as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(err));
    req.end(body);
  });
}
