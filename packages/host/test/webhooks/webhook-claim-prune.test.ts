import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHost, type Host } from '../../src/http/server';
import { type OpenedDatabase, rawOf } from '../../src/storage/database';
import { FairQueue } from '../../src/tasks/fair-queue';
import { SqliteTaskStore } from '../../src/tasks/task.store';
import { TaskRegistry } from '../../src/tasks/task-registry';
import type { Tool } from '../../src/tools/tool';
import { WebhookRepository } from '../../src/webhooks/webhook.repository';
import { WebhookService } from '../../src/webhooks/webhook.service';
import { CLAIM_RETENTION_MS, sha256Hex } from '../../src/webhooks/webhook-rules';
import { webhookWorkflows } from '../../src/webhooks/webhooks.routes';
import { openTestDatabase, stopSharedPostgres, testDialects } from '../support/postgres';
import { until } from '../tasks/helpers';

/**
 * Event ids are remembered for `CLAIM_RETENTION_MS` after their claim, also by a host that never
 * restarts: expired claims are pruned at start and then periodically, a bounded batch per
 * statement, the oldest first; a claim inside the retention period is kept, and its event id stays
 * a duplicate.
 */

const DAY = 24 * 3600 * 1000;

afterAll(async () => {
  await stopSharedPostgres();
});

for (const dialect of testDialects()) {
  describe(`expired claims pruned in batches (${dialect})`, () => {
    let opened: OpenedDatabase;
    beforeAll(async () => {
      opened = await openTestDatabase(dialect);
    }, 120_000);
    afterAll(async () => {
      await opened?.close();
    });

    it('deletes at most the batch, oldest first, and never a claim at or after the cutoff', async () => {
      const repo = new WebhookRepository(opened.db);
      await repo.insertTrigger({ id: 'wh_p', owner: 'o', workflow_id: 'w', name: 'p', defaults: '{}', permission_mode: 'full-access', secret_sha256: sha256Hex('s'), state: 'active', created_sandboxed: 0, created_at: new Date(0).toISOString(), last_delivery_at: null });
      // seven claims before the cutoff (ms 10..70), one exactly at it (100), two after
      const ages = [70, 10, 50, 30, 60, 20, 40, 100, 150, 200];
      for (const [i, ms] of ages.entries()) await sql`insert into webhook_event_claims (trigger_id, event_sha256, delivery_id, task_id, claimed_ms) values ('wh_p', ${sha256Hex(`e${i}`)}, ${`whd_${i}`}, null, ${ms})`.execute(opened.db);
      const left = async () => (await sql<{ claimed_ms: number }>`select claimed_ms from webhook_event_claims order by claimed_ms`.execute(opened.db)).rows.map((r) => Number(r.claimed_ms));
      expect(await repo.pruneClaims(100, 3)).toBe(3);
      expect(await left()).toEqual([40, 50, 60, 70, 100, 150, 200]);
      expect(await repo.pruneClaims(100, 3)).toBe(3);
      expect(await repo.pruneClaims(100, 3)).toBe(1);
      expect(await repo.pruneClaims(100, 3)).toBe(0);
      expect(await left()).toEqual([100, 150, 200]);
    });
  });
}

describe('a running host prunes expired claims periodically', () => {
  let home: string;
  let host: Host;
  let registry: TaskRegistry;
  let service: WebhookService;
  let now = Date.UTC(2026, 11, 1);
  let triggerId: string;
  let secret: string;

  beforeAll(async () => {
    home = mkdtempSync(join(tmpdir(), 'fengyu-webhook-prune-'));
    const tick: Tool = { name: 'tick', description: 'no-op', inputSchema: { type: 'object' }, effect: 'read', source: 'builtin', id: 'builtin:tick', schemaRevision: '1', idempotent: true, available: true, invoke: async () => null };
    host = await createHost({ home, port: 0, logLevel: 'silent', sandbox: 'off', bundledPluginDirs: [], writeHostFile: false, beforeDomains: (ctx) => ctx.catalog.register({ kind: 'builtin', list: async () => [tick] }) });
    const api = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(`${host.url}${path}`, { method, headers: { 'x-fengyu-token': host.token, 'content-type': 'application/json' }, body: body === undefined ? undefined : JSON.stringify(body) });
      return (await res.json()) as any;
    };
    const def = await api('POST', '/api/workflows', { name: 'prune', description: '', inputSchema: { type: 'object', properties: {} }, plan: { steps: [{ id: 'tick', tool: 'tick', arguments: {} }] } });
    await api('POST', `/api/workflows/${def.id}/publish`, { revision: def.revision });
    const clock = { now: () => now };
    registry = new TaskRegistry({
      store: new SqliteTaskStore(host.ctx.db),
      policy: new FairQueue(),
      clock,
      logger: pino({ level: 'silent' }),
      body: { prepare: async (req) => ({ workflowVersion: 1, inputs: req.inputs ?? {} }), run: async () => ({ state: 'completed', text: '' }) },
    });
    const workflows = host.app.workflows;
    if (!workflows) throw new Error('no workflows domain');
    service = new WebhookService({
      repo: new WebhookRepository(host.ctx.db),
      clock,
      tasks: registry,
      workflows: webhookWorkflows(workflows, host.ctx.db),
      posture: () => host.ctx.posture(),
      logger: pino({ level: 'silent' }),
      // every 20 ms, three claims per statement
      claimPrune: { everyMs: 20, batch: 3 },
    });
    const made = await service.create('default', def.id, { permissionMode: 'full-access' });
    triggerId = made.trigger.id;
    secret = made.secret;
    await service.start();
  }, 60_000);

  afterAll(async () => {
    service?.stop();
    await registry?.close();
    await host?.close();
    rmSync(home, { recursive: true, force: true });
  });

  const deliver = async (eventId: string) => service.deliver(await service.authenticate(triggerId, secret), eventId, {});
  const claims = () => {
    const raw = rawOf(host.ctx.db);
    if (!raw) throw new Error('the host is on SQLite');
    return Number((raw.prepare('select count(*) as n from webhook_event_claims where trigger_id = ?').get(triggerId) as { n: number }).n);
  };

  it('forgets each event id once its retention has passed, without a restart', async () => {
    const t0 = now;
    const first = new Map<string, string>();
    for (let i = 0; i < 7; i++) first.set(`old-${i}`, (await deliver(`old-${i}`)).taskId);
    now = t0 + 6 * DAY;
    const young = (await deliver('young')).taskId;
    expect(claims()).toBe(8);

    // a day past the first seven claims' retention: they go, in three statements; the young one stays
    now = t0 + CLAIM_RETENTION_MS + DAY;
    await until(() => claims() === 1, 'the expired claims to be pruned');
    const again = await deliver('old-3');
    expect(again.duplicate).toBe(false);
    expect(again.taskId).not.toBe(first.get('old-3'));
    const repeat = await deliver('young');
    expect(repeat).toMatchObject({ duplicate: true, taskId: young });

    // later still, the young claim expires too, and so does the new claim of old-3 in its turn
    now = t0 + 6 * DAY + CLAIM_RETENTION_MS + 1;
    await until(() => claims() === 1, 'the young claim to be pruned');
    expect((await deliver('young')).duplicate).toBe(false);
    now += CLAIM_RETENTION_MS + 1;
    await until(() => claims() === 0, 'every claim to be pruned');
  });
});
