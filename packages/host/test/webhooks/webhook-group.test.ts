import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createHost, type Host } from '../../src/http/server';
import { rawOf } from '../../src/storage/database';
import { FairQueue } from '../../src/tasks/fair-queue';
import { SqliteTaskStore, type TaskRecord } from '../../src/tasks/task.store';
import type { BodyOutcome } from '../../src/tasks/task-common';
import { TaskRegistry } from '../../src/tasks/task-registry';
import type { Tool } from '../../src/tools/tool';
import type { WebhookRepository } from '../../src/webhooks/webhook.repository';
import type { WebhookService } from '../../src/webhooks/webhook.service';
import { registerWebhookRoutes } from '../../src/webhooks/webhooks.routes';

/**
 * Group commit of deliveries on the host's SQLite file: the deliveries prepared in one turn are
 * committed in one transaction (claim, audit row, task row). If that transaction fails, none of
 * them leaves a claim, an audit row or a task, and nothing runs; a repeated event id inside one
 * group gets the first delivery's task; a delivery refused for capacity leaves no claim.
 */

let home: string;
let host: Host;
let accept: FastifyInstance;
let service: WebhookService;
let store: FailingStore;
let registry: TaskRegistry;
let workflowId: string;
const started: string[] = [];
let hold: Promise<void> | undefined;

/** The real store; `failWithin` makes the n-th write inside a producer's transaction fail (a full disk, say). */
class FailingStore extends SqliteTaskStore {
  failWithin = 0;
  override saveWithin(t: TaskRecord): void {
    if (this.failWithin > 0 && --this.failWithin === 0) throw new Error('disk I/O error');
    super.saveWithin(t);
  }
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'fengyu-webhook-group-'));
  const tick: Tool = { name: 'tick', description: 'no-op', inputSchema: { type: 'object' }, effect: 'read', source: 'builtin', id: 'builtin:tick', schemaRevision: '1', idempotent: true, available: true, invoke: async () => null };
  host = await createHost({ home, port: 0, logLevel: 'silent', sandbox: 'off', bundledPluginDirs: [], writeHostFile: false, beforeDomains: (ctx) => ctx.catalog.register({ kind: 'builtin', list: async () => [tick] }) });
  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${host.url}${path}`, { method, headers: { 'x-fengyu-token': host.token, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
    return (await res.json()) as any;
  };
  const def = await api('POST', '/api/workflows', { name: 'grouped', description: '', inputSchema: { type: 'object', properties: { n: { type: 'integer' } } }, plan: { steps: [{ id: 'tick', tool: 'tick', arguments: {} }] } });
  await api('POST', `/api/workflows/${def.id}/publish`, { revision: def.revision });
  workflowId = def.id;
  store = new FailingStore(host.ctx.db);
  registry = new TaskRegistry({
    store,
    // two running slots, one queued interactive task at most: the third concurrent delivery is refused
    policy: new FairQueue({ maxRunning: 2, maxQueued: 1 }),
    clock: { now: () => Date.now() },
    logger: pino({ level: 'silent' }),
    body: {
      prepare: async (req) => ({ workflowVersion: 1, inputs: req.inputs ?? {} }),
      run: async (task): Promise<BodyOutcome> => {
        started.push(task.id);
        await hold;
        return { state: 'completed', text: '' };
      },
    },
  });
  accept = Fastify();
  accept.decorate('workflows', host.app.workflows);
  service = registerWebhookRoutes(host.ctx, accept, registry);
  await accept.listen({ host: '127.0.0.1', port: 0 });
  await service.start();
});

afterAll(async () => {
  await accept?.close();
  await registry?.close();
  await host?.close();
  rmSync(home, { recursive: true, force: true });
});

async function newTrigger() {
  return service.create('default', workflowId, { permissionMode: 'full-access' });
}

async function deliver(triggerId: string, secret: string, eventId: string) {
  const port = (accept.server.address() as { port: number }).port;
  const res = await fetch(`http://127.0.0.1:${port}/api/workflow-hooks/${triggerId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-fengyu-webhook-secret': secret, 'x-fengyu-event-id': eventId },
    body: '{"n":1}',
  });
  return { status: res.status, body: (await res.json()) as any };
}

function rows(triggerId: string) {
  const raw = rawOf(host.ctx.db);
  if (!raw) throw new Error('no SQLite handle');
  return {
    claims: (raw.prepare('select count(*) as n from webhook_event_claims where trigger_id = ?').get(triggerId) as { n: number }).n,
    audit: raw.prepare('select state, task_id, error_code from webhook_deliveries where trigger_id = ? order by seq').all(triggerId) as Array<{ state: string; task_id: string | null; error_code: string | null }>,
    tasks: (raw.prepare('select count(*) as n from bg_tasks where trigger_id = ?').get(triggerId) as { n: number }).n,
  };
}

async function idle(): Promise<void> {
  for (;;) {
    const c = registry.globalCapacity();
    if (c.running + c.queued === 0) return;
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('webhook group commit', () => {
  it('commits a group of deliveries together: a failed transaction leaves no claim, audit row or task, and nothing runs', async () => {
    const { trigger, secret } = await newTrigger();
    const before = started.length;
    store.failWithin = 2; // the second task row of the group fails
    // two deliveries accepted in the same turn of the event loop: one group
    const row = await service.authenticate(trigger.id, secret);
    const answers = await Promise.allSettled([service.deliver(row, 'e1', { n: 1 }), service.deliver(row, 'e2', { n: 1 })]);
    expect(answers.map((a) => (a.status === 'rejected' ? String(a.reason) : 'accepted'))).toEqual(['Error: disk I/O error', 'Error: disk I/O error']);
    expect(rows(trigger.id)).toEqual({ claims: 0, audit: [], tasks: 0 });
    expect(started.length).toBe(before);
    expect(registry.globalCapacity().running).toBe(0);
    // the same events again: accepted, once each
    const retried = await Promise.all([deliver(trigger.id, secret, 'e1'), deliver(trigger.id, secret, 'e2')]);
    expect(retried.map((a) => [a.status, a.body.duplicate])).toEqual([
      [202, false],
      [202, false],
    ]);
    await idle();
    // the audit rows follow their tasks' ends
    const deadline = Date.now() + 20_000;
    while (rows(trigger.id).audit.some((r) => r.state !== 'COMPLETED') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    const after = rows(trigger.id);
    expect(after.claims).toBe(2);
    expect(after.tasks).toBe(2);
    expect(after.audit.map((r) => r.state)).toEqual(['COMPLETED', 'COMPLETED']);
  });

  it('gives every delivery of one event id in a group the first one’s task, and runs it once', async () => {
    const { trigger, secret } = await newTrigger();
    const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => deliver(trigger.id, secret, i % 2 === 0 ? 'same' : `other-${i}`)));
    await idle();
    expect(answers.every((a) => a.status === 202 || a.status === 429)).toBe(true);
    const same = answers.filter((_, i) => i % 2 === 0);
    const accepted = same.filter((a) => a.status === 202);
    expect(new Set(accepted.map((a) => a.body.taskId)).size).toBe(1);
    expect(accepted.filter((a) => !a.body.duplicate)).toHaveLength(1);
    const r = rows(trigger.id);
    // one task per accepted event id, never two for "same"
    expect(r.tasks).toBe(new Set(answers.filter((a) => a.status === 202).map((a) => a.body.taskId)).size);
  });

  it('refuses over capacity with 429 inside a group and leaves no claim, so a retry later is accepted', async () => {
    const { trigger, secret } = await newTrigger();
    let release!: () => void;
    hold = new Promise<void>((r) => {
      release = r;
    });
    const answers = await Promise.all(['c1', 'c2', 'c3', 'c4'].map((e) => deliver(trigger.id, secret, e)));
    expect(answers.map((a) => a.status)).toEqual([202, 202, 202, 429]);
    expect(answers[3]?.body.error.code).toBe('capacity_exhausted');
    const r = rows(trigger.id);
    expect(r.claims).toBe(3);
    expect(r.audit.map((x) => [x.state, x.error_code])).toEqual([
      ['SUBMITTED', null],
      ['SUBMITTED', null],
      ['QUEUED', null],
      ['FAILED', 'capacity_exhausted'],
    ]);
    release();
    hold = undefined;
    await idle();
    const retry = await deliver(trigger.id, secret, 'c4');
    expect([retry.status, retry.body.duplicate]).toEqual([202, false]);
    await idle();
    expect(rows(trigger.id).claims).toBe(4);
  });

  it('writes the audit row’s end in the commit that records its task’s end', async () => {
    const { trigger, secret } = await newTrigger();
    const raw = rawOf(host.ctx.db);
    if (!raw) throw new Error('no SQLite handle');
    // read at the instant the end is reported: the audit row already has it
    const seen: Array<[string, string | undefined]> = [];
    const off = registry.onFinished((t) => {
      if (t.triggerId !== trigger.id) return;
      const audit = raw.prepare('select state from webhook_deliveries where task_id = ?').get(t.id) as { state: string } | undefined;
      seen.push([t.state, audit?.state]);
    });
    try {
      const answers = await Promise.all(['w1', 'w2'].map((e) => deliver(trigger.id, secret, e)));
      expect(answers.map((a) => a.status)).toEqual([202, 202]);
      const deadline = Date.now() + 20_000;
      while (seen.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
    } finally {
      off();
    }
    expect(seen).toEqual([
      ['completed', 'COMPLETED'],
      ['completed', 'COMPLETED'],
    ]);
    expect(rows(trigger.id).audit.map((r) => r.state)).toEqual(['COMPLETED', 'COMPLETED']);
  });

  it('still ends the task, and the audit row afterwards, when the audit write inside the end commit fails', async () => {
    const { trigger, secret } = await newTrigger();
    // the service's own repository: its writes inside a task's end commit fail (a full disk, say)
    const repo = (service as unknown as { deps: { repo: WebhookRepository } }).deps.repo;
    const failing = vi.spyOn(repo, 'within').mockReturnValue({
      finishedDelivery: () => {
        throw new Error('disk I/O error');
      },
    });
    try {
      const answer = await deliver(trigger.id, secret, 'f1');
      expect(answer.status).toBe(202);
      // the audit row is followed up once the end is committed and reported
      const deadline = Date.now() + 20_000;
      while (rows(trigger.id).audit.some((r) => r.state !== 'COMPLETED') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(rows(trigger.id).audit.map((r) => r.state)).toEqual(['COMPLETED']);
      expect(failing).toHaveBeenCalled();
      expect((await store.get(answer.body.taskId))?.state).toBe('completed');
    } finally {
      failing.mockRestore();
    }
  });

  it('keeps at most 1,000 audit rows per trigger when whole groups pass the cap, dropping the oldest', async () => {
    const { trigger, secret } = await newTrigger();
    const row = await service.authenticate(trigger.id, secret);
    const raw = rawOf(host.ctx.db);
    if (!raw) throw new Error('no SQLite handle');
    // groups of 12 (accepted or refused for capacity: each leaves an audit row)
    const ids: string[] = [];
    for (let g = 0; g < 85; g++) {
      const before = (raw.prepare('select max(seq) as m from webhook_deliveries').get() as { m: number | null }).m ?? 0;
      await Promise.allSettled(Array.from({ length: 12 }, () => service.deliver(row, undefined, { n: 1 })));
      const added = raw.prepare('select id from webhook_deliveries where trigger_id = ? and seq > ? order by seq').all(trigger.id, before) as Array<{ id: string }>;
      ids.push(...added.map((a) => a.id));
      await idle();
    }
    expect(ids).toHaveLength(1020);
    const kept = raw.prepare('select id from webhook_deliveries where trigger_id = ? order by seq').all(trigger.id) as Array<{ id: string }>;
    expect(kept.map((k) => k.id)).toEqual(ids.slice(20));
  });
});
