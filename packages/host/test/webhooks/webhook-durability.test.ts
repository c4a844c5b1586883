import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * Webhooks across process ends: a host killed (SIGKILL) between a delivery's claim and its task
 * submission reports the delivery INTERRUPTED and never replays it; a restarted host keeps its
 * triggers, their audit and the event ids already seen.
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
  it('reports a claim caught by SIGKILL as INTERRUPTED, never replays it, and keeps triggers, audit and event ids across restarts', async () => {
    const a = await start({ FENGYU_TEST_WEBHOOK_CRASH_AFTER_CLAIM: '1' });
    const def = await api(a, 'POST', '/api/workflows', { name: 'Hooked', description: '', inputSchema: { type: 'object', required: ['text'], properties: { text: { type: 'string' } } }, plan: { steps: [{ id: 'say', tool: 'echo', arguments: { value: '{{inputs.text}}' } }] } });
    expect((await api(a, 'POST', `/api/workflows/${def.body.id}/publish`, { revision: def.body.revision })).status).toBe(200);
    const created = await api(a, 'POST', `/api/workflows/${def.body.id}/webhooks`, { permissionMode: 'full-access', name: 'crash' });
    expect(created.status).toBe(201);
    const { trigger, secret } = created.body as { trigger: { id: string }; secret: string };

    await expect(deliver(a, trigger.id, secret, 'evt-crash', 'lost')).rejects.toThrow();
    expect(await a.exited).toEqual({ code: null, signal: 'SIGKILL' });

    const b = await start();
    const deliveries = `/api/workflows/${def.body.id}/webhooks/${trigger.id}/deliveries`;
    const after = await api(b, 'GET', deliveries);
    expect(after.body.items).toHaveLength(1);
    expect(after.body.items[0]).toMatchObject({ state: 'INTERRUPTED', idempotencyKeySupplied: true, error: { code: 'webhook_interrupted' } });
    expect(after.body.items[0].taskId).toBeUndefined();

    const retry = await deliver(b, trigger.id, secret, 'evt-crash', 'lost');
    expect(retry.status).toBe(409);
    expect(retry.body.error.code).toBe('webhook_event_interrupted');
    expect((await api(b, 'GET', deliveries)).body.items).toHaveLength(1);

    const kept = await deliver(b, trigger.id, secret, 'evt-kept', 'kept');
    expect(kept.status).toBe(202);
    expect(kept.body.duplicate).toBe(false);
    b.child.kill('SIGTERM');
    await b.exited;

    const c = await start();
    const list = await api(c, 'GET', `/api/workflows/${def.body.id}/webhooks`);
    expect(list.body.items).toMatchObject([{ id: trigger.id, name: 'crash', state: 'active' }]);
    const again = await deliver(c, trigger.id, secret, 'evt-kept', 'kept');
    expect(again.status).toBe(202);
    expect(again.body).toEqual({ taskId: kept.body.taskId, deliveryId: kept.body.deliveryId, duplicate: true });
    const audit = await api(c, 'GET', deliveries);
    expect(audit.body.items.map((r: { id: string }) => r.id)).toEqual([kept.body.deliveryId, after.body.items[0].id]);
    expect(audit.body.items[1].state).toBe('INTERRUPTED');
    c.child.kill('SIGTERM');
    await c.exited;
  }, 180_000);
});
