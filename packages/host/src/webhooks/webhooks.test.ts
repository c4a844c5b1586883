import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MemoryTasks } from '../../test/support/memory-tasks';
import { migrate, type OpenedSqlite, openDatabase } from '../storage/database';
import type { TaskSnapshot } from '../tasks/task-submitter';
import { WebhookRepository } from './webhook.repository';
import { type DeliveryAnswer, WebhookService } from './webhook.service';
import { bindDelivery, checkEventId, CLAIM_RETENTION_MS, decodeCursor, encodeCursor, isLoopbackPeer, newDeliveryId, newSecret, secretMatches, sha256Hex, unbindableInputs } from './webhook-rules';

/** The webhook rules, and the service over a real SQLite file with an in-memory task submitter. */

describe('webhook rules', () => {
  it('accepts only loopback peers', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) expect(isLoopbackPeer(a)).toBe(true);
    for (const a of ['10.0.0.1', '192.168.1.2', '::ffff:10.0.0.1', 'fe80::1', '0.0.0.0', '', undefined, '128.0.0.1', '1127.0.0.1']) expect(isLoopbackPeer(a)).toBe(false);
  });

  it('checks event ids: absent, or 1..200 characters', () => {
    expect(checkEventId(undefined)).toEqual({ ok: true });
    expect(checkEventId('a'.repeat(200))).toEqual({ ok: true, eventId: 'a'.repeat(200) });
    expect(checkEventId('a'.repeat(201)).ok).toBe(false);
    expect(checkEventId('').ok).toBe(false);
    expect(checkEventId(['a', 'b']).ok).toBe(false);
  });

  it('makes 256-bit secrets and compares them by digest', () => {
    const s = newSecret();
    expect(Buffer.from(s.slice(5), 'base64url')).toHaveLength(32);
    expect(newSecret()).not.toBe(s);
    expect(secretMatches(s, sha256Hex(s))).toBe(true);
    // the digest is SHA-256 of the UTF-8 text (the stored form of every existing secret and event id)
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(sha256Hex('é')).toBe(createHash('sha256').update(Buffer.from('é', 'utf8')).digest('hex'));
    expect(secretMatches('abc', 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')).toBe(true);
    for (const bad of [`${s} `, s.slice(0, -1), '', undefined, 42, 'x'.repeat(600)]) expect(secretMatches(bad, sha256Hex(s))).toBe(false);
  });

  it('makes delivery ids that sort by acceptance time and never repeat', () => {
    const t = 1_796_000_000_000;
    const ids = [t - 86_400_000, t - 1, t, t, t, t + 1, t + 86_400_000 * 365].map((ms) => newDeliveryId(ms));
    for (const id of ids) expect(id).toMatch(/^whd_[0-9a-z]{9}[0-9A-Za-z]{12}$/);
    expect(new Set(ids).size).toBe(ids.length);
    // later acceptance times sort after earlier ones (ids of one millisecond in any order)
    const times = ids.map((id) => Number.parseInt(id.slice(4, 13), 36));
    expect(times).toEqual([t - 86_400_000, t - 1, t, t, t, t + 1, t + 86_400_000 * 365]);
    for (let i = 1; i < ids.length; i++) if ((times[i] as number) > (times[i - 1] as number)) expect((ids[i] as string) > (ids[i - 1] as string)).toBe(true);
    // across a change of digit count (36^8 ms), the fixed width keeps the order
    expect(newDeliveryId(36 ** 8 - 1) < newDeliveryId(36 ** 8)).toBe(true);
    // a clock before 1970 or a fraction still gives a well-formed id
    expect(newDeliveryId(-5)).toMatch(/^whd_0{9}/);
    expect(newDeliveryId(1.7)).toMatch(/^whd_0{8}1/);
  });

  it('round-trips cursors and rejects foreign ones', () => {
    expect(decodeCursor(encodeCursor(42))).toBe(42);
    expect(decodeCursor(undefined)).toBeUndefined();
    expect(decodeCursor('bogus')).toBe('invalid');
  });

  it('binds body fields over defaults and names undeclared or mistyped fields', () => {
    const schema = { type: 'object', required: ['a'], properties: { a: { type: 'string' }, n: { type: 'number' } } };
    expect(bindDelivery(schema, { a: 'd', n: 1 }, { a: 'b' })).toEqual({ ok: true, inputs: { a: 'b', n: 1 } });
    expect(bindDelivery(schema, { a: 'd' }, undefined)).toEqual({ ok: true, inputs: { a: 'd' } });
    const extra = bindDelivery(schema, {}, { a: 'x', zz: 1 });
    expect(extra.ok === false && extra.problems.map((p) => p.field)).toEqual(['zz']);
    const typed = bindDelivery(schema, {}, { a: 1 });
    expect(typed.ok === false && typed.problems.map((p) => p.field)).toEqual(['a']);
    expect(bindDelivery(schema, {}, [1]).ok).toBe(false);
    // a JSON null is a body, and not an object (only no body at all binds the defaults alone)
    const nulled = bindDelivery(schema, { a: 'd' }, null);
    expect(nulled.ok === false && nulled.problems.map((p) => p.code)).toEqual(['webhook_body_not_object']);
    expect(unbindableInputs({ type: 'object', properties: { f: { type: 'string', format: 'fengyu-file' }, d: { type: 'string', 'x-fengyu-auto': 'shared-directory' }, v: { type: 'string' } } }).map((p) => p.field)).toEqual(['f', 'd']);
  });
});

describe('webhook service', () => {
  let home: string;
  let database: OpenedSqlite;
  let tasks: MemoryTasks;
  let now: number;
  let repo: WebhookRepository;

  const workflows = {
    exists: async () => {},
    active: async () => ({ version: 1, inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }),
  };
  const service = (extra: Partial<ConstructorParameters<typeof WebhookService>[0]> = {}) =>
    new WebhookService({ repo, clock: { now: () => now }, tasks, workflows, posture: () => ({ mode: 'unsandboxed', backend: 'none' }), logger: pino({ level: 'silent' }), ...extra });

  beforeEach(async () => {
    home = mkdtempSync(join(tmpdir(), 'fengyu-webhooks-'));
    database = openDatabase(home);
    await migrate(database.db);
    repo = new WebhookRepository(database.db);
    tasks = new MemoryTasks();
    now = Date.parse('2026-01-01T00:00:00Z');
  });
  afterEach(async () => {
    await database.close();
    rmSync(home, { recursive: true, force: true });
  });

  async function created(s: WebhookService) {
    const { trigger, secret } = await s.create('alice', 'wf1', { permissionMode: 'full-access' });
    return { row: await s.authenticate(trigger.id, secret), secret };
  }

  it('lets the database decide between concurrent claims of one event id', async () => {
    const s = service();
    const { row } = await created(s);
    const claims = await Promise.all(Array.from({ length: 20 }, (_, i) => repo.claim({ id: `d${i}`, triggerId: row.id, acceptedAt: 'x', acceptedMs: now, eventSha256: sha256Hex('e') })));
    expect(claims.filter((c) => c.claimed)).toHaveLength(1);
    const loser = claims.find((c) => !c.claimed);
    expect(loser?.claimed === false && loser.existing.delivery_id).toBe(claims.findIndex((c) => c.claimed) >= 0 ? `d${claims.findIndex((c) => c.claimed)}` : '');
  });

  it('keeps at most 1,000 audit rows per trigger, dropping the oldest', async () => {
    const s = service();
    const { row } = await created(s);
    const answers: DeliveryAnswer[] = [];
    for (let i = 0; i < 1005; i++) answers.push(await s.deliver(row, undefined, { text: `n${i}` }));
    const count = database.raw.prepare('select count(*) as n from webhook_deliveries where trigger_id = ?').get(row.id) as { n: number };
    expect(count.n).toBe(1000);
    const page = await s.deliveries('alice', 'wf1', row.id, 100);
    expect(page.items[0]?.id).toBe(answers[1004]?.deliveryId);
    const ids = new Set(database.raw.prepare('select id from webhook_deliveries').all().map((r) => (r as { id: string }).id));
    expect(ids.has(answers[4]?.deliveryId ?? '')).toBe(false);
    expect(ids.has(answers[5]?.deliveryId ?? '')).toBe(true);
  });

  it('records a task that finished before its delivery row learned the task id', async () => {
    const s = service();
    await s.start();
    const { row } = await created(s);
    const submit = tasks.submit.bind(tasks);
    tasks.submit = async (req) => {
      const r = await submit(req);
      if (r.ok) tasks.finish(r.task.id, 'completed');
      return r;
    };
    const a = await s.deliver(row, undefined, { text: 'fast' });
    const page = await s.deliveries('alice', 'wf1', row.id);
    expect(page.items[0]).toMatchObject({ id: a.deliveryId, state: 'COMPLETED', taskId: a.taskId });
  });

  it('marks a claim caught by a stop INTERRUPTED on start and never replays its event id', async () => {
    const first = service({
      crashPoint: (point) => {
        if (point === 'webhook-claim') throw new Error('stopped');
      },
    });
    const { row } = await created(first);
    await expect(first.deliver(row, 'evt-1', { text: 'a' })).rejects.toThrow('stopped');
    expect(tasks.submitted).toHaveLength(0);

    const second = service();
    await second.start();
    const page = await second.deliveries('alice', 'wf1', row.id);
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({ state: 'INTERRUPTED', idempotencyKeySupplied: true, error: { code: 'webhook_interrupted' } });
    await expect(second.deliver(row, 'evt-1', { text: 'a' })).rejects.toMatchObject({ code: 'webhook_event_interrupted' });
    expect(tasks.submitted).toHaveLength(0);
    // a new event id runs
    expect((await second.deliver(row, 'evt-2', { text: 'a' })).duplicate).toBe(false);
  });

  it('follows queued tasks that finished while the host was down', async () => {
    const s = service();
    const { row } = await created(s);
    const a = await s.deliver(row, undefined, { text: 'a' });
    s.stop();
    const t = tasks.tasks.get(a.taskId) as TaskSnapshot;
    Object.assign(t, { state: 'interrupted', finishedAt: new Date(now + 5).toISOString(), error: { code: 'task_interrupted', message: 'the host stopped' } });
    const again = service();
    await again.start();
    await again.reconcile();
    const page = await again.deliveries('alice', 'wf1', row.id);
    expect(page.items[0]).toMatchObject({ state: 'INTERRUPTED', durationMs: 5, error: { code: 'task_interrupted' } });
  });

  it('forgets event ids after the retention period', async () => {
    const s = service();
    const { row } = await created(s);
    const a = await s.deliver(row, 'evt', { text: 'a' });
    expect((await s.deliver(row, 'evt', { text: 'a' })).duplicate).toBe(true);
    now += CLAIM_RETENTION_MS + 1;
    await service().start();
    const b = await s.deliver(row, 'evt', { text: 'a' });
    expect(b.duplicate).toBe(false);
    expect(b.taskId).not.toBe(a.taskId);
  });
});
