import { type ChildProcess, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * Webhooks across process ends: a host killed (SIGKILL) after a delivery's claim was written but
 * before its group commit leaves nothing behind (claim, audit row and task commit together, and no
 * task starts before), so the sender's retry runs once; a claim committed without its task comes
 * back INTERRUPTED and is never replayed; a restarted host keeps its triggers, their audit and
 * the event ids already seen.
 */

const fixture = join(import.meta.dirname, '../support/serve-fixture.ts');
const home = mkdtempSync(join(tmpdir(), 'fengyu-webhook-crash-'));
const children: ChildProcess[] = [];

afterAll(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  rmSync(home, { recursive: true, force: true });
});

interface Running {
  url: string;
  token: string;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function start(env: Record<string, string> = {}): Promise<Running> {
  const child = spawn(process.execPath, ['--import', 'tsx', fixture, home], { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, ...env } });
  children.push(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return new Promise((resolve, reject) => {
    let buf = '';
    child.stdout?.on('data', (d) => {
      buf += d;
      const line = buf.split('\n')[0];
      if (buf.includes('\n') && line) resolve({ ...JSON.parse(line), child, exited });
    });
    child.on('exit', (code) => reject(new Error(`fixture exited ${code}`)));
  });
}

async function api(h: Running, method: string, path: string, body?: unknown) {
  const res = await fetch(`${h.url}${path}`, { method, headers: { 'x-fengyu-token': h.token, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.status, body: (await res.json()) as any };
}

async function deliver(h: Running, triggerId: string, secret: string, eventId: string, text: string) {
  const res = await fetch(`${h.url}/api/workflow-hooks/${triggerId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-fengyu-webhook-secret': secret, 'x-fengyu-event-id': eventId },
    body: JSON.stringify({ text }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

describe('webhook durability', () => {
  it('a SIGKILL inside the group commit leaves neither claim, audit row nor task; a committed claim with no task comes back INTERRUPTED and is never replayed; restarts keep triggers, audit and event ids', async () => {
    const a = await start({ FENGYU_CRASH_AT: 'webhook-claim' });
    const def = await api(a, 'POST', '/api/workflows', { name: 'Hooked', description: '', inputSchema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } }, plan: { steps: [{ id: 'say', tool: 'echo', arguments: { value: '{{inputs.text}}' } }] } });
    expect((await api(a, 'POST', `/api/workflows/${def.body.id}/publish`, { revision: def.body.revision })).status).toBe(200);
    const created = await api(a, 'POST', `/api/workflows/${def.body.id}/webhooks`, { permissionMode: 'full-access', name: 'crash' });
    expect(created.status).toBe(201);
    const { trigger, secret } = created.body as { trigger: { id: string }; secret: string };

    // killed after the claim was written, before its transaction (claim, audit, task) committed
    await expect(deliver(a, trigger.id, secret, 'evt-crash', 'lost')).rejects.toThrow();
    expect(await a.exited).toEqual({ code: null, signal: 'SIGKILL' });

    const b = await start();
    const deliveries = `/api/workflows/${def.body.id}/webhooks/${trigger.id}/deliveries`;
    expect((await api(b, 'GET', deliveries)).body.items).toEqual([]);
    expect((await api(b, 'GET', '/api/agent/tasks')).body.items).toEqual([]);
    // nothing ran and nothing was claimed: the sender's retry is accepted, once
    const retry = await deliver(b, trigger.id, secret, 'evt-crash', 'again');
    expect(retry.status).toBe(202);
    expect(retry.body.duplicate).toBe(false);
    const retryAgain = await deliver(b, trigger.id, secret, 'evt-crash', 'again');
    expect(retryAgain.body).toEqual({ ...retry.body, duplicate: true });
    const kept = await deliver(b, trigger.id, secret, 'evt-kept', 'kept');
    expect(kept.status).toBe(202);
    expect(kept.body.duplicate).toBe(false);
    const tasks = await api(b, 'GET', '/api/agent/tasks');
    expect(tasks.body.items.map((t: { id: string }) => t.id).sort()).toEqual([retry.body.taskId, kept.body.taskId].sort());
    b.child.kill('SIGTERM');
    await b.exited;

    // a claim committed without its task (what a stop leaves on the one-statement-at-a-time path)
    const file = new Database(join(home, 'fengyu.db'));
    file.prepare("insert into webhook_event_claims (trigger_id, event_sha256, delivery_id, task_id, claimed_ms) values (?, ?, 'whd_orphan', null, ?)").run(trigger.id, createHash('sha256').update('evt-orphan').digest('hex'), Date.now());
    file.prepare("insert into webhook_deliveries (id, trigger_id, state, accepted_at, accepted_ms, idempotency_key_supplied) values ('whd_orphan', ?, 'CLAIMED', ?, ?, 1)").run(trigger.id, new Date().toISOString(), Date.now());
    file.close();

    const c = await start();
    const list = await api(c, 'GET', `/api/workflows/${def.body.id}/webhooks`);
    expect(list.body.items).toMatchObject([{ id: trigger.id, name: 'crash', state: 'active' }]);
    const audit = await api(c, 'GET', deliveries);
    expect(audit.body.items.map((r: { id: string }) => r.id)).toEqual(['whd_orphan', kept.body.deliveryId, retry.body.deliveryId]);
    expect(audit.body.items[0]).toMatchObject({ state: 'INTERRUPTED', idempotencyKeySupplied: true, error: { code: 'webhook_interrupted' } });
    expect(audit.body.items[0].taskId).toBeUndefined();
    const orphan = await deliver(c, trigger.id, secret, 'evt-orphan', 'x');
    expect(orphan.status).toBe(409);
    expect(orphan.body.error.code).toBe('webhook_event_interrupted');
    const again = await deliver(c, trigger.id, secret, 'evt-kept', 'kept');
    expect(again.status).toBe(202);
    expect(again.body).toEqual({ taskId: kept.body.taskId, deliveryId: kept.body.deliveryId, duplicate: true });
    expect((await api(c, 'GET', deliveries)).body.items).toHaveLength(3);
    c.child.kill('SIGTERM');
    await c.exited;
  }, 180_000);
});
