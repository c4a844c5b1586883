import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TaskSnapshot } from '../../src/tasks/task-submitter';
import { startTestHost, type TestHost } from '../support/host';
import { postgresAvailable, startPostgres, type TestPostgres } from '../support/postgres';
import { publishCommand, until } from '../tasks/helpers';

/**
 * The per-owner running cap on the PostgreSQL / pg-boss path (issue 38): the dispatcher's fair
 * queue holds one owner at 12 of the 16 shared slots, so another owner's task starts at once.
 */

describe.skipIf(!postgresAvailable())('per-owner running cap on a shared database', () => {
  let server: TestPostgres;
  let a: TestHost;
  let home: string;
  let bob: Record<string, string>;
  const bobTasks: string[] = [];

  beforeAll(async () => {
    server = await startPostgres();
    home = mkdtempSync(join(tmpdir(), 'fengyu-shared-cap-'));
    a = await startTestHost({ keepHome: home, databaseUrl: await server.createDatabase(), writeHostFile: false, sandbox: 'off' });
    bob = { 'x-fengyu-token': (await a.api('POST', '/api/owners', { name: 'bob' })).body.token };
  }, 120_000);
  afterAll(async () => {
    for (const id of bobTasks) await a?.api('POST', `/api/agent/tasks/${id}/kill`, undefined, bob);
    await a?.close();
    await server?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('one owner’s 14 long tasks hold 12 slots; the other owner’s task runs at once', async () => {
    const made = await a.api('POST', '/api/workflows', { name: 'slow', inputSchema: { type: 'object', properties: {} }, plan: { steps: [{ id: 'w', tool: 'slow', arguments: { ms: 600_000 } }] } }, bob);
    await a.api('POST', `/api/workflows/${made.body.id}/publish`, { revision: made.body.revision }, bob);
    for (let i = 0; i < 14; i++) {
      const r = await a.api('POST', '/api/agent/tasks', { workflowId: made.body.id, permissionMode: 'full-access', priority: 'interactive' }, bob);
      expect(r.status, JSON.stringify(r.body)).toBe(202);
      bobTasks.push(r.body.id);
    }
    const cap = await until(async () => {
      const c = (await a.api('GET', '/api/agent/tasks/capacity', undefined, bob)).body;
      return c.running === 12 && c.queued === 2 ? c : undefined;
    }, 'the dispatcher to hold the flood at the cap', 60_000);
    expect(cap).toMatchObject({ maxRunning: 16, ownerMaxRunning: 12, ownedRunning: 12, ownedQueued: 2 });
    const quick = await publishCommand(a, 'echo mine', { type: 'object', properties: {} }, 'quick');
    const mine = await a.api('POST', '/api/agent/tasks', { workflowId: quick, permissionMode: 'full-access' });
    expect(mine.status).toBe(202);
    const done = (await a.api('GET', `/api/agent/tasks/${mine.body.id}/output?timeoutMs=60000`)).body as TaskSnapshot;
    expect(done.state).toBe('completed');
    expect((await a.api('GET', '/api/agent/tasks/capacity', undefined, bob)).body).toMatchObject({ ownedRunning: 12, ownedQueued: 2 });
  }, 120_000);
});
