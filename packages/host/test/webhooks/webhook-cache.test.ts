import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OpenedDatabase } from '../../src/storage/database';
import { type TriggerRow, WebhookRepository } from '../../src/webhooks/webhook.repository';
import { WebhookService } from '../../src/webhooks/webhook.service';
import { startTestHost, type TestHost } from '../support/host';
import { MemoryTasks } from '../support/memory-tasks';
import { openTestDatabase, stopSharedPostgres, testDialects } from '../support/postgres';

/**
 * What a delivery reuses between requests — the trigger row with its secret digest (single-host
 * SQLite file only) and the input schema of a published version — never outlives a change: each
 * test first makes a delivery succeed (so whatever is cached is warm), then changes the trigger
 * or its workflow and expects the very next delivery to see the change.
 */

describe('webhook caches over HTTP', () => {
  let t: TestHost;
  let sandboxed = false;

  beforeAll(async () => {
    t = await startTestHost();
    const real = t.host.ctx.posture;
    t.host.ctx.posture = () => (sandboxed ? { mode: 'sandboxed', backend: 'test' } : real());
  });
  afterAll(async () => {
    await t?.close();
  });

  const schema = { type: 'object', required: ['text'], properties: { text: { type: 'string' } } };
  const plan = { steps: [{ id: 'say', tool: 'echo', arguments: { value: '{{inputs.text}}' } }] };

  async function published(): Promise<{ id: string; revision: number }> {
    const def = await t.api('POST', '/api/workflows', { name: 'Cached', description: '', inputSchema: schema, plan });
    expect(def.status, JSON.stringify(def.body)).toBe(200);
    const pub = await t.api('POST', `/api/workflows/${def.body.id}/publish`, { revision: def.body.revision });
    expect(pub.status, JSON.stringify(pub.body)).toBe(200);
    return { id: def.body.id, revision: pub.body.revision };
  }

  async function trigger(workflowId: string) {
    const res = await t.api('POST', `/api/workflows/${workflowId}/webhooks`, { permissionMode: 'full-access' });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    return res.body as { trigger: { id: string }; secret: string };
  }

  async function deliver(triggerId: string, secret: string, body: unknown) {
    const res = await fetch(`${t.host.url}/api/workflow-hooks/${triggerId}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-fengyu-webhook-secret': secret }, body: JSON.stringify(body) });
    return { status: res.status, body: (await res.json()) as Record<string, any> };
  }

  it('refuses the old secret on the very next delivery after a rotation, and the new one works', async () => {
    const wf = await published();
    const { trigger: tr, secret } = await trigger(wf.id);
    for (let i = 0; i < 3; i++) expect((await deliver(tr.id, secret, { text: 'warm' })).status).toBe(202);
    const rotated = await t.api('POST', `/api/workflows/${wf.id}/webhooks/${tr.id}/rotate`);
    expect(rotated.status).toBe(200);
    const old = await deliver(tr.id, secret, { text: 'old' });
    expect(old.status).toBe(401);
    expect(old.body.error.code).toBe('webhook_secret_invalid');
    expect((await deliver(tr.id, rotated.body.secret, { text: 'new' })).status).toBe(202);
    // rotated again: the secret that just worked (and is cached) fails at once too
    const again = await t.api('POST', `/api/workflows/${wf.id}/webhooks/${tr.id}/rotate`);
    expect((await deliver(tr.id, rotated.body.secret, { text: 'x' })).status).toBe(401);
    expect((await deliver(tr.id, again.body.secret, { text: 'x' })).status).toBe(202);
  });

  it('answers 404 on the very next delivery after the trigger or its workflow is deleted', async () => {
    const wf = await published();
    const a = await trigger(wf.id);
    const b = await trigger(wf.id);
    expect((await deliver(a.trigger.id, a.secret, { text: 'warm' })).status).toBe(202);
    expect((await deliver(b.trigger.id, b.secret, { text: 'warm' })).status).toBe(202);
    expect((await t.api('DELETE', `/api/workflows/${wf.id}/webhooks/${a.trigger.id}`)).status).toBe(200);
    expect((await deliver(a.trigger.id, a.secret, { text: 'x' })).body.error.code).toBe('webhook_trigger_not_found');
    expect((await t.api('DELETE', `/api/workflows/${wf.id}`)).status).toBe(200);
    const gone = await deliver(b.trigger.id, b.secret, { text: 'x' });
    expect(gone.status).toBe(404);
    expect(gone.body.error.code).toBe('webhook_trigger_not_found');
  });

  it('pauses a warm trigger at once when isolation is weakened, and resumes it at once', async () => {
    const wf = await published();
    sandboxed = true;
    try {
      const { trigger: tr, secret } = await trigger(wf.id);
      expect((await deliver(tr.id, secret, { text: 'warm' })).status).toBe(202);
      sandboxed = false;
      const paused = await deliver(tr.id, secret, { text: 'x' });
      expect(paused.status).toBe(409);
      expect(paused.body.error.code).toBe('webhook_trigger_paused');
      sandboxed = true;
      expect((await deliver(tr.id, secret, { text: 'x' })).status).toBe(202);
    } finally {
      sandboxed = false;
    }
  });

  it('binds the very next delivery to a newly published version’s input schema', async () => {
    const wf = await published();
    const { trigger: tr, secret } = await trigger(wf.id);
    expect((await deliver(tr.id, secret, { text: 'warm' })).status).toBe(202);
    const current = await t.api('GET', `/api/workflows/${wf.id}`);
    const next = { type: 'object', required: ['count'], properties: { count: { type: 'integer' } } };
    const saved = await t.api('PUT', `/api/workflows/${wf.id}`, { revision: current.body.revision, inputSchema: next, plan: { steps: [{ id: 'say', tool: 'echo', arguments: { value: '{{inputs.count}}' } }] } });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect((await t.api('POST', `/api/workflows/${wf.id}/publish`, { revision: saved.body.revision })).status).toBe(200);
    const stale = await deliver(tr.id, secret, { text: 'old shape' });
    expect(stale.status).toBe(400);
    expect(stale.body.error.code).toBe('webhook_body_invalid');
    expect((await deliver(tr.id, secret, { count: 2 })).status).toBe(202);
  });

  it('runs the newly published version on the very next delivery (same input schema)', async () => {
    const wf = await published();
    const { trigger: tr, secret } = await trigger(wf.id);
    for (let i = 0; i < 2; i++) {
      const warm = await deliver(tr.id, secret, { text: 'warm' });
      expect(warm.status).toBe(202);
      expect((await t.api('GET', `/api/agent/tasks/${warm.body.taskId}`)).body.workflowVersion).toBe(1);
    }
    const current = await t.api('GET', `/api/workflows/${wf.id}`);
    const saved = await t.api('PUT', `/api/workflows/${wf.id}`, { revision: current.body.revision, description: 'second', inputSchema: schema, plan });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect((await t.api('POST', `/api/workflows/${wf.id}/publish`, { revision: saved.body.revision })).status).toBe(200);
    const next = await deliver(tr.id, secret, { text: 'new' });
    expect(next.status).toBe(202);
    expect((await t.api('GET', `/api/agent/tasks/${next.body.taskId}`)).body.workflowVersion).toBe(2);
  });
});

/** A repository whose trigger reads can be held after they read the row (a read in flight). */
class HeldReads extends WebhookRepository {
  hold?: Promise<void>;
  /** Called once a held read has its row (before it waits on the hold). */
  onRead?: () => void;
  override async trigger(id: string): Promise<TriggerRow | undefined> {
    const row = await super.trigger(id);
    if (this.hold) {
      this.onRead?.();
      await this.hold;
    }
    return row;
  }
}

afterAll(() => stopSharedPostgres());

describe.each(testDialects())('the trigger cache on %s', (dialect) => {
  let home: string;
  let opened: OpenedDatabase;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'fengyu-webhook-cache-'));
    opened = await openTestDatabase(dialect, home);
  });
  afterAll(async () => {
    await opened?.close();
    rmSync(home, { recursive: true, force: true });
  });

  const workflows = { exists: async () => {}, active: async () => ({ version: 1, inputSchema: { type: 'object', properties: { text: { type: 'string' } } } }) };
  const service = (repo: WebhookRepository) =>
    new WebhookService({ repo, clock: { now: () => Date.now() }, tasks: new MemoryTasks(), workflows, posture: () => ({ mode: 'unsandboxed', backend: 'none' }), logger: pino({ level: 'silent' }) });

  it('does not keep a row read while a rotation ran: the old secret fails once the rotation is done', async () => {
    const repo = new HeldReads(opened.db);
    const s = service(repo);
    const { trigger, secret } = await s.create('alice', 'wf1', { permissionMode: 'full-access' });
    let release!: () => void;
    repo.hold = new Promise((r) => {
      release = r;
    });
    // this read has the old row and is still in flight when the secret is replaced (the rotation
    // starts once the read has its row: a query's order against another is not promised)
    const read = new Promise<void>((r) => {
      repo.onRead = r;
    });
    const inFlight = s.authenticate(trigger.id, secret);
    await read;
    const rotated = await s.rotate('alice', 'wf1', trigger.id);
    repo.hold = undefined;
    release();
    await inFlight;
    await expect(s.authenticate(trigger.id, secret)).rejects.toMatchObject({ code: 'webhook_secret_invalid' });
    expect((await s.authenticate(trigger.id, rotated.secret)).id).toBe(trigger.id);
  });

  it.runIf(dialect === 'postgres')('another host’s rotation or deletion holds on the very next delivery (shared database)', async () => {
    // two hosts on one shared database: each has its own service
    const a = service(new WebhookRepository(opened.db));
    const b = service(new WebhookRepository(opened.db));
    const { trigger, secret } = await a.create('alice', 'wf1', { permissionMode: 'full-access' });
    expect((await a.authenticate(trigger.id, secret)).id).toBe(trigger.id);
    const rotated = await b.rotate('alice', 'wf1', trigger.id);
    await expect(a.authenticate(trigger.id, secret)).rejects.toMatchObject({ code: 'webhook_secret_invalid' });
    expect((await a.authenticate(trigger.id, rotated.secret)).id).toBe(trigger.id);
    await b.remove('alice', 'wf1', trigger.id);
    await expect(a.authenticate(trigger.id, rotated.secret)).rejects.toMatchObject({ code: 'webhook_trigger_not_found' });
  });
});
