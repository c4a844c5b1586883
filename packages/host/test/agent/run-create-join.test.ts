import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawOf } from '../../src/storage/database';
import { auto, startTestHost, type TestHost } from '../support/host';

/**
 * The commit that creates a run is written at the end of its turn of the event loop, and the
 * run's first steps, started in that turn, join it: a 1-step run of a tool that answers at once is
 * one transaction (created, planned, started, ended, completed). The log's order is unchanged; a
 * call that may take effect is still made only once its start is durable; a creation that fails
 * leaves nothing and no call that may take effect is made.
 */

let t: TestHost;
/** The run events each SQLite transaction inserted, in order (run id and type). */
const transactions: Array<Array<{ run: string; type: string }>> = [];
/** SQLite transactions that threw (rolled back). */
let failedTransactions = 0;

beforeAll(async () => {
  t = await startTestHost();
  const raw = rawOf(t.host.ctx.db);
  if (!raw) throw new Error('the test host runs on SQLite');
  // every prepared-statement commit of the event log runs in its transaction function (made once per log)
  const log = t.host.ctx.events as unknown as { transaction?: (work: () => unknown) => unknown };
  const original = log.transaction;
  if (!original) throw new Error('the event log has no SQLite transaction function');
  log.transaction = (work) => {
    const before = (raw.prepare('select coalesce(max(rowid), 0) as m from run_events').get() as { m: number }).m;
    let out: unknown;
    try {
      out = original(work);
    } catch (err) {
      failedTransactions += 1;
      throw err;
    }
    const rows = raw.prepare('select run_id as run, type from run_events where rowid > ? order by rowid').all(before) as Array<{ run: string; type: string }>;
    if (rows.length) transactions.push(rows);
    return out;
  };
});

afterAll(async () => {
  t.tools.probe = undefined;
  await t.close();
});

const of = (runId: string) => transactions.map((tx) => tx.filter((r) => r.run === runId).map((r) => r.type)).filter((types) => types.length > 0);
const logTypes = async (runId: string) => (await t.host.ctx.db.selectFrom('run_events').select(['type', 'seq']).where('run_id', '=', runId).orderBy('seq').execute()).map((r) => r.type);
const count = async (table: 'runs' | 'run_events' | 'step_executions') => Number((await sql<{ n: number }>`select count(*) as n from ${sql.table(table)}`.execute(t.host.ctx.db)).rows[0]?.n);

describe('the commit that creates a run, joined by its first steps', () => {
  it('a 1-step run of a tool that answers at once is one transaction, in the usual log order', async () => {
    const res = await t.api('POST', '/api/agent/run', { workflow: { steps: [{ id: 'a', tool: 'echo', arguments: { value: 1 } }] }, config: auto });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const runId = res.body.runId as string;
    const seen = await t.stream(runId);
    expect(seen.at(-1)?.type).toBe('complete');
    const types = await logTypes(runId);
    expect(types[0]).toBe('run_created');
    expect(types[1]).toBe('plan_ready');
    expect(types.indexOf('step_start')).toBeGreaterThan(1);
    expect(types.slice(-2)).toEqual(['step_complete', 'complete']);
    expect(seen.map((e) => e.type)).toEqual(types);
    // every event of the run in the transaction that created it
    expect(of(runId)).toEqual([types]);
    const detail = (await t.api('GET', `/api/agent/runs/${runId}`)).body;
    expect(detail.status).toBe('completed');
    expect(detail.executions.find((x: { stepId: string }) => x.stepId === 'a').status).toBe('done');
  });

  it('a first step whose call may take effect starts in the creating transaction and calls only once it is written', async () => {
    let logged: string[] | undefined;
    t.tools.probe = (name, ctx) => {
      if (name !== 'write_note') return;
      // a prepared read on SQLite: the log as it is at this instant
      void t.host.ctx.events.read(ctx.runId as string).then((events) => {
        logged = events.map((e) => e.type);
      });
    };
    const res = await t.api('POST', '/api/agent/run', { workflow: { steps: [{ id: 'w', tool: 'write_note', arguments: { text: 'x' } }] }, config: auto });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const runId = res.body.runId as string;
    expect((await t.stream(runId)).at(-1)?.type).toBe('complete');
    t.tools.probe = undefined;
    expect(logged?.slice(0, 2)).toEqual(['run_created', 'plan_ready']);
    expect(logged).toEqual(expect.arrayContaining(['step_start', 'tool']));
    expect(logged).not.toContain('step_complete');
    const first = of(runId)[0] as string[];
    expect(first.slice(0, 2)).toEqual(['run_created', 'plan_ready']);
    expect(first).toContain('step_start');
    // the call's end came in a later transaction
    expect(first).not.toContain('step_complete');
  });

  it('a creation that fails answers an error, stores nothing of the run and makes no call that may take effect', async () => {
    const db = t.host.ctx.db;
    const writes = t.tools.calls.get('write_note') ?? 0;
    const before = { runs: await count('runs'), events: await count('run_events'), steps: await count('step_executions') };
    const failedBefore = failedTransactions;
    await sql`create trigger refuse_run before insert on runs when new.goal = 'refuse this run' begin select raise(abort, 'refused by the test'); end`.execute(db);
    try {
      const res = await t.api('POST', '/api/agent/run', {
        goal: 'refuse this run',
        workflow: { steps: [{ id: 'w', tool: 'write_note', arguments: { text: 'never' } }, { id: 'e', tool: 'echo', arguments: { value: 2 } }] },
        config: auto,
      });
      expect(res.status).toBeGreaterThanOrEqual(500);
      expect(res.body?.runId).toBeUndefined();
      // the turn's group commit, then the creation alone: after that the run tries no other write
      // (no record of a failure for a run that does not exist)
      expect(failedTransactions - failedBefore).toBeLessThanOrEqual(2);
    } finally {
      await sql`drop trigger refuse_run`.execute(db);
    }
    // the host goes on: a later run completes, and it is the only thing written since
    const next = await t.api('POST', '/api/agent/run', { workflow: { steps: [{ id: 'a', tool: 'echo', arguments: { value: 3 } }] }, config: auto });
    expect(next.status, JSON.stringify(next.body)).toBe(200);
    expect((await t.stream(next.body.runId)).at(-1)?.type).toBe('complete');
    expect(await count('runs')).toBe(before.runs + 1);
    expect(await count('run_events')).toBe(before.events + (await logTypes(next.body.runId)).length);
    expect(await count('step_executions')).toBe(before.steps + 1);
    expect(t.tools.calls.get('write_note') ?? 0).toBe(writes);
    expect((await t.api('GET', '/api/agent/runs')).body.runs?.some((r: { goal?: string }) => r.goal === 'refuse this run') ?? false).toBe(false);
  });

  it('runs created together each keep their own order, every one in the usual log order', async () => {
    const ids = await Promise.all(
      Array.from({ length: 10 }, async (_, i) => {
        const res = await t.api('POST', '/api/agent/run', { workflow: { steps: [{ id: 'a', tool: 'echo', arguments: { value: i } }, { id: 'b', tool: 'echo', arguments: { value: i }, dependsOn: ['a'] }] }, config: auto });
        expect(res.status, JSON.stringify(res.body)).toBe(200);
        return res.body.runId as string;
      }),
    );
    for (const id of ids) {
      const seen = await t.stream(id);
      const types = await logTypes(id);
      expect(seen.map((e) => e.type)).toEqual(types);
      expect(types.slice(0, 2)).toEqual(['run_created', 'plan_ready']);
      const aEnd = seen.findIndex((e) => e.type === 'step_complete' && e.data.stepId === 'a');
      const bStart = seen.findIndex((e) => e.type === 'step_start' && e.data.stepId === 'b');
      expect(aEnd).toBeGreaterThan(seen.findIndex((e) => e.type === 'step_start' && e.data.stepId === 'a'));
      expect(bStart).toBeGreaterThan(aEnd);
      expect(types.slice(-2)).toEqual(['step_complete', 'complete']);
      // the run's first transaction created it
      expect(of(id)[0]?.slice(0, 2)).toEqual(['run_created', 'plan_ready']);
    }
  });
});
