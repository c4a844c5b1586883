import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';
import { until } from './helpers';

/**
 * One owner cannot hold every running slot (issue 38): a second owner floods the real task
 * executor with long tasks on a real host; the primary owner's interactive webhook delivery and a
 * task it submits by hand still start at once.
 */

let t: TestHost;
let bob: Record<string, string>;
const bobTasks: string[] = [];

beforeAll(async () => {
  t = await startTestHost();
  const made = await t.api('POST', '/api/owners', { name: 'bob' });
  expect(made.status, JSON.stringify(made.body)).toBe(200);
  bob = { 'x-fengyu-token': made.body.token };
});
afterAll(async () => {
  for (const id of bobTasks) await t.api('POST', `/api/agent/tasks/${id}/kill`, undefined, bob);
  await t?.close();
});

async function publish(plan: unknown, headers: Record<string, string> = {}, inputSchema: unknown = { type: 'object', properties: {} }): Promise<string> {
  const made = await t.api('POST', '/api/workflows', { name: 'w', inputSchema, plan }, headers);
  expect(made.status, JSON.stringify(made.body)).toBe(200);
  const pub = await t.api('POST', `/api/workflows/${made.body.id}/publish`, { revision: made.body.revision }, headers);
  expect(pub.status, JSON.stringify(pub.body)).toBe(200);
  return made.body.id;
}

describe('per-owner running cap', () => {
  it('a flood of 20 long tasks by one owner holds 12 slots; the other owner’s webhook and hand task start at once', async () => {
    const slow = await publish({ steps: [{ id: 'wait', tool: 'slow', arguments: { ms: 600_000 } }] }, bob);
    for (let i = 0; i < 20; i++) {
      const r = await t.api('POST', '/api/agent/tasks', { workflowId: slow, priority: 'interactive', permissionMode: 'full-access' }, bob);
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      bobTasks.push(r.body.id);
    }
    const cap = await until(async () => {
      const c = (await t.api('GET', '/api/agent/tasks/capacity', undefined, bob)).body;
      return c.ownedRunning === 12 && c.ownedQueued === 8 ? c : undefined;
    }, 'the flood to settle at the cap');
    expect(cap).toMatchObject({ maxRunning: 16, ownerMaxRunning: 12, running: 12 });

    // the primary owner's interactive webhook delivery starts at once and finishes
    const echo = await publish({ steps: [{ id: 'say', tool: 'echo', arguments: { value: '{{inputs.text}}' } }] }, {}, { type: 'object', properties: { text: { type: 'string' } } });
    const tr = await t.api('POST', `/api/workflows/${echo}/webhooks`, { permissionMode: 'full-access' });
    expect(tr.status, JSON.stringify(tr.body)).toBe(201);
    const res = await fetch(`${t.host.url}/api/workflow-hooks/${tr.body.trigger.id}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-fengyu-webhook-secret': tr.body.secret },
      body: JSON.stringify({ text: 'hello' }),
    });
    expect(res.status).toBe(202);
    const { taskId } = (await res.json()) as { taskId: string };
    const delivered = (await t.api('GET', `/api/agent/tasks/${taskId}`)).body;
    expect(delivered.queued).toBe(false);
    const done = (await t.api('GET', `/api/agent/tasks/${taskId}/output?timeoutMs=30000`)).body;
    expect(done).toMatchObject({ state: 'completed', priority: 'interactive' });

    // a task the primary owner submits by hand starts at once too
    const byHand = await t.api('POST', '/api/agent/tasks', { workflowId: echo, inputs: { text: 'x' }, priority: 'interactive' });
    expect(byHand.status).toBe(202);
    expect(byHand.body.queued).toBe(false);
    // the flooding owner is still held at its cap
    expect((await t.api('GET', '/api/agent/tasks/capacity', undefined, bob)).body).toMatchObject({ ownedRunning: 12, ownedQueued: 8 });
  });
});
