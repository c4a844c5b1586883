import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { newTaskId } from '../../src/tasks/task-id';
import { startTestHost, type TestHost } from '../support/host';
import { postgresAvailable, startPostgres, type TestPostgres } from '../support/postgres';
import { publishCommand } from './helpers';

/**
 * Task ids are version 7 UUIDs: the submission time first (a later task's id sorts after an
 * earlier one's, so new `bg_tasks` keys share the newest leaf), then 74 random bits; on the host's
 * SQLite file and on a shared PostgreSQL database alike. Another owner's task stays a 404.
 */

const V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const timeOf = (id: string) => Number.parseInt(id.slice(0, 8) + id.slice(9, 13), 16);

describe('newTaskId', () => {
  it('carries the submission millisecond, sorts in submission order and never repeats', () => {
    const at = Date.UTC(2026, 11, 4, 13, 45, 0, 321);
    expect(newTaskId(at)).toMatch(V7);
    expect(timeOf(newTaskId(at))).toBe(at);
    // the executor's clock is sub-millisecond: the fraction is dropped
    expect(timeOf(newTaskId(at + 0.75))).toBe(at);
    const ids = [at - 1000, at - 1, at, at + 1, at + 86_400_000].map(newTaskId);
    expect([...ids].sort()).toEqual(ids);
    expect(new Set(Array.from({ length: 10_000 }, () => newTaskId(at))).size).toBe(10_000);
  });
});

/** Submits three tasks one after another; checks their ids' format, embedded time and order. */
async function submittedInOrder(t: TestHost): Promise<void> {
  const wf = await publishCommand(t, 'echo id-order', { type: 'object', properties: {} }, 'ids');
  const ids: string[] = [];
  const before = Date.now();
  for (let i = 0; i < 3; i++) {
    const r = await t.api('POST', '/api/agent/tasks', { workflowId: wf, permissionMode: 'full-access' });
    expect(r.status, JSON.stringify(r.body)).toBe(202);
    ids.push(r.body.id as string);
  }
  const after = Date.now();
  for (const id of ids) {
    expect(id).toMatch(V7);
    expect(timeOf(id)).toBeGreaterThanOrEqual(before);
    expect(timeOf(id)).toBeLessThanOrEqual(after);
  }
  // submitted one after another: never out of order (equal milliseconds compare by the random part)
  for (let i = 1; i < ids.length; i++) expect(timeOf(ids[i] as string)).toBeGreaterThanOrEqual(timeOf(ids[i - 1] as string));
  expect(new Set(ids).size).toBe(3);
  const got = await t.api('GET', `/api/agent/tasks/${ids[0]}`);
  expect(got.status).toBe(200);
  expect(got.body.id).toBe(ids[0]);
  // a well-formed id of the same millisecond that no task has is a 404, as any unknown id
  const other = `${(ids[0] as string).slice(0, 15)}${'0'.repeat(3)}-8000-000000000000`;
  expect((await t.api('GET', `/api/agent/tasks/${other}`)).status).toBe(404);
}

describe('task ids on the host (SQLite)', () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await startTestHost({ sandbox: 'off' });
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  it('are version 7 UUIDs in submission order', async () => {
    await submittedInOrder(t);
  });
});

describe.skipIf(!postgresAvailable())('task ids on a shared database (PostgreSQL)', () => {
  let server: TestPostgres;
  let t: TestHost;
  let home: string;
  beforeAll(async () => {
    server = await startPostgres();
    home = mkdtempSync(join(tmpdir(), 'fengyu-task-ids-'));
    t = await startTestHost({ keepHome: home, databaseUrl: await server.createDatabase(), writeHostFile: false, sandbox: 'off' });
  }, 120_000);
  afterAll(async () => {
    await t?.close();
    await server?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('are version 7 UUIDs in submission order', async () => {
    await submittedInOrder(t);
  });
});
