import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewEvent } from '../../src/events/event-log';
import { startTestHost, type TestHost } from '../support/host';

/**
 * The last step's end and the run's end are one commit: the run's end is decided when the last
 * step settles, and both are written in one transaction, the step's end first. A host that dies
 * (or a commit that fails) leaves neither or both; the log never shows the run's end without the
 * step's end before it. A run whose last step ended but whose end was never written (a log of an
 * earlier version, or a crash between two commits) still resumes and completes.
 */

let t: TestHost;
const commits: Array<{ runId: string; types: string[] }> = [];
const homes: string[] = [];

beforeAll(async () => {
  t = await startTestHost();
  const events = t.host.ctx.events;
  const grouped = events.commitGrouped.bind(events);
  events.commitGrouped = ((runId: string, list: NewEvent[], ...rest: unknown[]) => {
    commits.push({ runId, types: list.map((e) => e.type) });
    return (grouped as (...a: unknown[]) => ReturnType<typeof grouped>)(runId, list, ...rest);
  }) as typeof events.commitGrouped;
});

afterAll(async () => {
  await t.close();
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

const of = (runId: string) => commits.filter((c) => c.runId === runId).map((c) => c.types);
const start = async (host: TestHost, steps: unknown[]) => {
  const res = await host.api('POST', '/api/agent/run', { workflow: { steps }, config: { planApproval: false, permissionMode: 'full-access' } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.runId as string;
};
const logTypes = async (host: TestHost, runId: string) =>
  (await host.host.ctx.db.selectFrom('run_events').select(['type', 'seq']).where('run_id', '=', runId).orderBy('seq').execute()).map((r) => r.type);

describe("the last step's end and the run's end", () => {
  it('are written in one commit for a 1-step run, the step end first', async () => {
    const runId = await start(t, [{ id: 'a', tool: 'echo', arguments: { value: 1 } }]);
    const seen = await t.stream(runId);
    expect(seen.map((e) => e.type).slice(-2)).toEqual(['step_complete', 'complete']);
    const written = of(runId);
    expect(written.at(-1)?.slice(-2)).toEqual(['step_complete', 'complete']);
    // the step's end is written once, in that commit
    expect(written.flat().filter((x) => x === 'step_complete')).toHaveLength(1);
    const detail = (await t.api('GET', `/api/agent/runs/${runId}`)).body;
    expect(detail.status).toBe('completed');
    expect(detail.executions.find((x: { stepId: string }) => x.stepId === 'a').status).toBe('done');
  });

  it("store the run's result once serialized: the row's text is the complete event's result, for one sink and eight", async () => {
    for (const sinks of [1, 8]) {
      const steps = Array.from({ length: sinks }, (_, i) => ({ id: `s${i}`, tool: 'echo', arguments: { value: { i, text: `第${i} "q"\n`, list: [i, null, true] } } }));
      const runId = await start(t, steps);
      const seen = await t.stream(runId);
      const complete = seen.at(-1);
      expect(complete?.type).toBe('complete');
      const row = await t.host.ctx.db.selectFrom('runs').select(['result', 'summary']).where('id', '=', runId).executeTakeFirstOrThrow();
      const stored = await t.host.ctx.db.selectFrom('run_events').select('data').where('run_id', '=', runId).where('type', '=', 'complete').executeTakeFirstOrThrow();
      expect(JSON.parse(stored.data)).toEqual({ result: JSON.parse(row.result as string), summary: row.summary });
      expect(complete?.data.result).toEqual(JSON.parse(row.result as string));
      const stepResult = (id: string) => seen.find((e) => e.type === 'step_complete' && e.data.stepId === id)?.data.result;
      const want = sinks === 1 ? stepResult('s0') : Object.fromEntries(steps.map((s) => [s.id, stepResult(s.id)]));
      expect(JSON.stringify(want)).toContain('"list":[');
      expect(JSON.parse(row.result as string)).toEqual(want);
    }
  });

  it("store the sink step's own result text as the run's result (a 1-step run, a chain's last step, a DAG's one sink), never another step's", async () => {
    const value = (i: number) => ({ z: i, a: `第${i} "q"\n`, nested: { list: [i, null, true, 1.5e-7] } });
    const shapes = [
      [{ id: 'only', tool: 'echo', arguments: { value: value(0) } }],
      [0, 1, 2].map((i) => ({ id: `c${i}`, tool: 'echo', arguments: { value: value(i) }, ...(i ? { dependsOn: [`c${i - 1}`] } : {}) })),
      [...[0, 1, 2].map((i) => ({ id: `w${i}`, tool: 'echo', arguments: { value: value(10 + i) } })), { id: 'sink', tool: 'echo', arguments: { value: value(99) }, dependsOn: ['w0', 'w1', 'w2'] }],
    ];
    for (const steps of shapes) {
      const runId = await start(t, steps);
      expect((await t.stream(runId)).at(-1)?.type).toBe('complete');
      const sink = (steps.at(-1) as { id: string }).id;
      const row = await t.host.ctx.db.selectFrom('runs').select('result').where('id', '=', runId).executeTakeFirstOrThrow();
      const step = await t.host.ctx.db.selectFrom('step_executions').select('result').where('run_id', '=', runId).where('step_id', '=', sink).executeTakeFirstOrThrow();
      expect(row.result).toBe(step.result);
      expect(JSON.parse(row.result as string)).toMatchObject({ echoed: (steps.at(-1) as { arguments: { value: unknown } }).arguments.value });
      const stored = await t.host.ctx.db.selectFrom('run_events').select('data').where('run_id', '=', runId).where('type', '=', 'complete').executeTakeFirstOrThrow();
      expect(stored.data.startsWith(`{"result":${step.result},"summary":`)).toBe(true);
    }
  });

  it('are one commit for the last step of a chain only; an earlier step ends before the next starts', async () => {
    const runId = await start(t, [
      { id: 'a', tool: 'echo', arguments: { value: 1 } },
      { id: 'b', tool: 'echo', arguments: { value: 2 }, dependsOn: ['a'] },
    ]);
    const seen = await t.stream(runId);
    expect(seen.at(-1)?.type).toBe('complete');
    const written = of(runId);
    const last = written.at(-1) as string[];
    expect(last.slice(-2)).toEqual(['step_complete', 'complete']);
    const types = await logTypes(t, runId);
    const aEnd = seen.findIndex((e) => e.type === 'step_complete' && e.data.stepId === 'a');
    const bStart = seen.findIndex((e) => e.type === 'step_start' && e.data.stepId === 'b');
    expect(aEnd).toBeGreaterThan(-1);
    expect(aEnd).toBeLessThan(bStart);
    expect(types).toEqual(seen.map((e) => e.type));
  });

  it('a failing last step and the run failure are one commit', async () => {
    const runId = await start(t, [{ id: 'x', tool: 'fail', arguments: {} }]);
    const seen = await t.stream(runId);
    expect(seen.map((e) => e.type).slice(-2)).toEqual(['step_complete', 'error']);
    expect(of(runId).at(-1)?.slice(-2)).toEqual(['step_complete', 'error']);
    expect((await t.api('GET', `/api/agent/runs/${runId}`)).body.status).toBe('failed');
  });

  it('a failing end commit writes neither: the log then shows the failure, never complete without the step end', async () => {
    const db = t.host.ctx.db;
    await sql`create trigger refuse_complete before insert on run_events when new.type = 'complete' begin select raise(abort, 'refused by the test'); end`.execute(db);
    try {
      const runId = await start(t, [{ id: 'a', tool: 'echo', arguments: { value: 1 } }]);
      const seen = await t.stream(runId);
      expect(seen.at(-1)?.type).toBe('error');
      const types = await logTypes(t, runId);
      expect(types).not.toContain('complete');
      // the step's end rolled back with the run's end
      expect(types).not.toContain('step_complete');
      expect(types.at(-1)).toBe('error');
      expect(seen.map((e) => e.type)).toEqual(types);
      const detail = (await t.api('GET', `/api/agent/runs/${runId}`)).body;
      expect(detail.status).toBe('failed');
    } finally {
      await sql`drop trigger refuse_complete`.execute(db);
    }
  });

  it('every completed log of a busy host shows the step end right before complete', async () => {
    const ids = await Promise.all(Array.from({ length: 12 }, () => start(t, [{ id: 'a', tool: 'echo', arguments: { value: 1 } }])));
    for (const id of ids) {
      const seen = await t.stream(id);
      expect(seen.at(-1)?.type).toBe('complete');
      const types = await logTypes(t, id);
      expect(types.slice(-2)).toEqual(['step_complete', 'complete']);
    }
  });

  it('a run whose last step ended but whose end was never written resumes and completes without running the step again', async () => {
    const home = mkdtempSync(join(tmpdir(), 'fengyu-end-'));
    homes.push(home);
    const a = await startTestHost({ keepHome: home });
    const runId = await start(a, [{ id: 'a', tool: 'echo', arguments: { value: 'kept' } }]);
    expect((await a.stream(runId)).at(-1)?.type).toBe('complete');
    // the state a host that died between the step's end and the run's end left (two commits)
    await a.host.ctx.db.deleteFrom('run_events').where('run_id', '=', runId).where('type', '=', 'complete').execute();
    await a.host.ctx.db.updateTable('runs').set({ status: 'running', finished_at: null, result: null, summary: null }).where('id', '=', runId).execute();
    await a.close(); // a graceful stop marks the live-looking run interrupted
    const b = await startTestHost({ keepHome: home });
    try {
      expect((await b.api('GET', `/api/agent/runs/${runId}`)).body.status).toBe('interrupted');
      expect((await b.api('POST', `/api/agent/runs/${runId}/resume`)).status).toBe(200);
      for (let i = 0; i < 500 && (await b.api('GET', `/api/agent/runs/${runId}`)).body.status !== 'awaiting_plan_approval'; i++) await new Promise((r) => setTimeout(r, 20));
      expect((await b.api('POST', `/api/agent/${runId}/approve`, {})).status).toBe(200);
      const all = await b.stream(runId);
      const after = all.slice(all.findIndex((e) => e.type === 'resumed'));
      expect(after.at(-1)?.type).toBe('complete');
      expect(after.at(-1)?.data.result).toMatchObject({ echoed: 'kept' });
      expect(after.some((e) => e.type === 'step_start')).toBe(false);
      expect((await b.api('GET', `/api/agent/runs/${runId}`)).body.status).toBe('completed');
    } finally {
      await b.close();
    }
  });
});
