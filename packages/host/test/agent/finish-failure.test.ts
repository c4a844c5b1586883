import type Database from 'better-sqlite3';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventLog } from '../../src/events/event-log';
import { type Db, rawOf } from '../../src/storage/database';
import { auto, startTestHost, type TestHost } from '../support/host';

/**
 * The end of a run whose commit fails (a write refused for a reason other than a crash) does not
 * leave the run `running`: it ends `failed`, with the error recorded in its log and its row.
 */

let t: TestHost;
let db: Db;
let log: EventLog;
beforeAll(async () => {
  t = await startTestHost({
    beforeDomains: (core) => {
      db = core.db;
      log = core.events;
    },
  });
});
afterAll(async () => t.close());

const chain = (n: number) => ({ steps: Array.from({ length: n }, (_, i) => ({ id: `s${i}`, tool: 'noop', ...(i ? { dependsOn: [`s${i - 1}`] } : {}) })) });

describe('a run whose end cannot be written', () => {
  it('ends failed with the error recorded when its `complete` commit is refused', async () => {
    await sql`create trigger refuse_complete before insert on run_events when new.type = 'complete' begin select raise(abort, 'the disk refused the write'); end`.execute(db);
    try {
      const res = await t.api('POST', '/api/agent/run', { config: auto, workflow: chain(3) });
      expect(res.status).toBe(200);
      const runId = res.body.runId as string;
      const streamed = await t.stream(runId);
      expect(streamed.at(-1)?.type).toBe('error');
      const stored = await log.read(runId);
      expect(stored.map((e) => e.type)).not.toContain('complete');
      const last = stored.at(-1) as { type: string; message?: string };
      expect(last.type).toBe('error');
      expect(last.message).toContain('the disk refused the write');
      const run = await t.api('GET', `/api/agent/runs/${runId}`);
      const body = run.body.run ?? run.body;
      expect(body.status).toBe('failed');
      expect(String(body.error)).toContain('the disk refused the write');
    } finally {
      await sql`drop trigger refuse_complete`.execute(db);
    }
  });

  it('ends failed when its end is refused by the run row (the projection, not the log)', async () => {
    // the row refuses its end whether it is updated to it or, its changes folded in one commit, inserted with it
    await sql`create trigger refuse_row before update of status on runs when new.status = 'completed' begin select raise(abort, 'the row refused the end'); end`.execute(db);
    await sql`create trigger refuse_row_insert before insert on runs when new.status = 'completed' begin select raise(abort, 'the row refused the end'); end`.execute(db);
    try {
      const res = await t.api('POST', '/api/agent/run', { config: auto, workflow: chain(2) });
      const runId = res.body.runId as string;
      const streamed = await t.stream(runId);
      expect(streamed.at(-1)?.type).toBe('error');
      const run = await t.api('GET', `/api/agent/runs/${runId}`);
      const body = run.body.run ?? run.body;
      expect(body.status).toBe('failed');
      expect(String(body.error)).toContain('the row refused the end');
    } finally {
      await sql`drop trigger refuse_row`.execute(db);
      await sql`drop trigger refuse_row_insert`.execute(db);
    }
  });

  it('is recorded failed once the write works again when even the first record of the failure is refused', async () => {
    // the first two terminal events written are refused (the end, then the failure's first record)
    const raw = rawOf(db) as Database.Database;
    let refusals = 0;
    raw.function('fy_test_refuse', (type: unknown) => (type === 'complete' || type === 'error') && refusals < 2 ? (refusals += 1, 1) : 0);
    await sql`create trigger refuse_terminal before insert on run_events when fy_test_refuse(new.type) = 1 begin select raise(abort, 'busy disk'); end`.execute(db);
    try {
      const res = await t.api('POST', '/api/agent/run', { config: auto, workflow: chain(2) });
      const runId = res.body.runId as string;
      const streamed = await t.stream(runId);
      expect(streamed.at(-1)?.type).toBe('error');
      expect(refusals).toBe(2);
      const stored = await log.read(runId);
      expect(stored.filter((e) => e.type === 'error' || e.type === 'complete').map((e) => e.type)).toEqual(['error']);
      const run = await t.api('GET', `/api/agent/runs/${runId}`);
      const body = run.body.run ?? run.body;
      expect(body.status).toBe('failed');
      expect(String(body.error)).toContain('busy disk');
    } finally {
      await sql`drop trigger refuse_terminal`.execute(db);
    }
  });
});
