import type { RunEvent } from '@fengyu/protocol';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventLog } from '../../src/events/event-log';
import type { Db } from '../../src/storage/database';
import { auto, startTestHost, type TestHost } from '../support/host';

/**
 * The levels of a DAG share group commits: a step's end is reported before its commit is written,
 * so the steps that depend on it start in the same turn of the event loop and their start is
 * written in the same transaction as that end (never an earlier one). A dependency's end that
 * fails to be written fails the run, and the dependents' starts are not written either.
 */

let t: TestHost;
let db: Db;
let log: EventLog;
beforeAll(async () => {
  t = await startTestHost({
    beforeDomains: (core) => {
      db = core.db;
      log = core.events;
      watchBursts();
    },
  });
});
afterAll(async () => t.close());

/** A DAG of `levels` × `width` read steps, each level depending on every step of the one before. */
const dag = (levels: number, width: number, tool = 'noop') => ({
  steps: Array.from({ length: levels * width }, (_, i) => {
    const level = Math.floor(i / width);
    return { id: `l${level}n${i % width}`, tool, ...(level ? { dependsOn: Array.from({ length: width }, (_, j) => `l${level - 1}n${j}`) } : {}) };
  }),
});

/**
 * Numbers the bursts in which the log publishes events: the events of one commit (or group
 * commit) are published together, in one synchronous burst, right after it is written.
 */
const published: Array<{ e: RunEvent; batch: number }> = [];
function watchBursts(): void {
  let batch = 0;
  let open = false;
  const publish = log.publish.bind(log);
  log.publish = (e: RunEvent) => {
    if (!open) {
      open = true;
      batch += 1;
      queueMicrotask(() => {
        open = false;
      });
    }
    published.push({ e, batch });
    publish(e);
  };
}

async function runWatched(workflow: unknown): Promise<{ runId: string; batches: Map<string, number>; events: RunEvent[] }> {
  const res = await t.api('POST', '/api/agent/run', { config: auto, workflow });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const runId = res.body.runId as string;
  await t.stream(runId);
  const mine = published.filter((p) => p.e.runId === runId);
  const batches = new Map<string, number>();
  for (const { e, batch: b } of mine) if (e.type === 'step_start' || e.type === 'step_complete') batches.set(`${e.type} ${(e as { stepId: string }).stepId}`, b);
  return { runId, batches, events: mine.map((s) => s.e) };
}

describe('DAG levels and group commits', () => {
  it('starts the next level in the same group commit as the ends it depends on, never before them', async () => {
    // A level that runs past the runner's slice (a preempted thread on a loaded machine) lets the
    // loop turn before the next level starts: sharing is looked for over up to five runs, the
    // order in every one of them.
    let shared = 0;
    for (let attempt = 0; attempt < 5 && shared === 0; attempt++) {
      const workflow = dag(3, 3);
      const { batches, events } = await runWatched(workflow);
      expect(events.at(-1)?.type).toBe('complete');
      for (const step of workflow.steps) {
        const start = batches.get(`step_start ${step.id}`) as number;
        expect(start).toBeGreaterThan(0);
        for (const dep of step.dependsOn ?? []) {
          const end = batches.get(`step_complete ${dep}`) as number;
          // a dependent's start is written in the same transaction as its dependency's end, or later
          expect(start).toBeGreaterThanOrEqual(end);
          if (start === end) shared += 1;
        }
      }
      // every step row ends done (a start row superseded in the group never overwrote an end row)
      const rows = await db.selectFrom('step_executions' as never).select(['step_id' as never, 'status' as never]).where('run_id' as never, '=', events[0]?.runId as never).execute();
      expect(rows).toHaveLength(9);
      expect(rows.every((r) => (r as { status: string }).status === 'done')).toBe(true);
    }
    // the next level did not wait for a commit of the previous one
    expect(shared).toBeGreaterThan(0);
  });

  it('a dependency whose end cannot be written fails the run, and no dependent start is written', async () => {
    // a real write failure: SQLite refuses the end of step l0n1
    await sql`create trigger refuse_end before insert on run_events when new.type = 'step_complete' and json_extract(new.data, '$.stepId') = 'l0n1' begin select raise(abort, 'the disk refused the write'); end`.execute(db);
    try {
      const res = await t.api('POST', '/api/agent/run', { config: auto, workflow: dag(3, 3) });
      expect(res.status).toBe(200);
      const runId = res.body.runId as string;
      const streamed = await t.stream(runId);
      expect(streamed.at(-1)?.type).toBe('error');
      const stored = await log.read(runId);
      const types = stored.map((e) => `${e.type}${'stepId' in e ? ` ${e.stepId}` : ''}`);
      expect(types).not.toContain('step_complete l0n1');
      // no step of the next level was recorded as started: its start was never written without l0n1's end
      expect(types.filter((x) => x.startsWith('step_start l1') || x.startsWith('step_start l2'))).toEqual([]);
      expect(stored.at(-1)?.type).toBe('error');
      const run = await t.api('GET', `/api/agent/runs/${runId}`);
      expect(run.body.status ?? run.body.run?.status).toBe('failed');
    } finally {
      await sql`drop trigger refuse_end`.execute(db);
    }
  });
});

describe('a chain of built-in steps and group commits', () => {
  const chain = (n: number) => ({ steps: Array.from({ length: n }, (_, i) => ({ id: `s${i}`, tool: 'noop', ...(i ? { dependsOn: [`s${i - 1}`] } : {}) })) });

  it('writes a step\'s end and the next step\'s start in one group commit, never the start first', async () => {
    const { batches, events } = await runWatched(chain(12));
    expect(events.at(-1)?.type).toBe('complete');
    let shared = 0;
    for (let i = 1; i < 12; i++) {
      const start = batches.get(`step_start s${i}`) as number;
      const end = batches.get(`step_complete s${i - 1}`) as number;
      expect(start).toBeGreaterThanOrEqual(end);
      if (start === end) shared += 1;
    }
    // the steps of a slice share one transaction instead of two each
    expect(shared).toBeGreaterThan(0);
    const stored = await log.read(events[0]?.runId as string);
    const order = stored.filter((e) => e.type === 'step_start' || e.type === 'step_complete').map((e) => `${e.type} ${(e as { stepId: string }).stepId}`);
    for (let i = 1; i < 12; i++) expect(order.indexOf(`step_start s${i}`)).toBeGreaterThan(order.indexOf(`step_complete s${i - 1}`));
  });

  it('a step whose end cannot be written fails the run, and the next step\'s start is not written', async () => {
    await sql`create trigger refuse_chain_end before insert on run_events when new.type = 'step_complete' and json_extract(new.data, '$.stepId') = 's3' begin select raise(abort, 'the disk refused the write'); end`.execute(db);
    try {
      const res = await t.api('POST', '/api/agent/run', { config: auto, workflow: chain(8) });
      expect(res.status).toBe(200);
      const runId = res.body.runId as string;
      const streamed = await t.stream(runId);
      expect(streamed.at(-1)?.type).toBe('error');
      const stored = await log.read(runId);
      const types = stored.map((e) => `${e.type}${'stepId' in e ? ` ${e.stepId}` : ''}`);
      expect(types).toContain('step_complete s2');
      expect(types).not.toContain('step_complete s3');
      expect(types.filter((x) => /^step_start s[4-7]$/.test(x))).toEqual([]);
      expect(stored.at(-1)?.type).toBe('error');
      const rows = await db.selectFrom('step_executions' as never).select(['step_id' as never, 'status' as never]).where('run_id' as never, '=', runId as never).execute();
      const byId = new Map(rows.map((r) => [(r as { step_id: string }).step_id, (r as { status: string }).status]));
      expect(byId.get('s2')).toBe('done');
      expect(byId.get('s3')).not.toBe('done');
      for (const id of ['s4', 's5', 's6', 's7']) expect(byId.has(id)).toBe(false);
    } finally {
      await sql`drop trigger refuse_chain_end`.execute(db);
    }
  });
});
