import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { RunRepository } from '../../src/agent/run.repository';
import { rawOf } from '../../src/storage/database';
import { auto, startTestHost, type TestHost } from '../support/host';

/**
 * A run's changes of its row and of its steps' rows that share a group commit fold into one write
 * per row: in each transaction a row is inserted or updated at most once, and the rows after the
 * run are those its commits give when each writes its rows in turn (the changes unfolded).
 */

let t: TestHost;
/** Per SQLite transaction of the event log: the rows of `runs` and `step_executions` it wrote, one entry per write. */
const transactions: string[][] = [];

beforeAll(async () => {
  t = await startTestHost();
  const raw = rawOf(t.host.ctx.db);
  if (!raw) throw new Error('the test host runs on SQLite');
  // every insert and update of a run's or a step's row, recorded by the connection's own triggers
  raw.exec(`
    create temp table row_writes (what text not null);
    create temp trigger runs_inserted after insert on main.runs begin insert into row_writes values ('run ' || new.id); end;
    create temp trigger runs_updated after update on main.runs begin insert into row_writes values ('run ' || new.id); end;
    create temp trigger steps_inserted after insert on main.step_executions begin insert into row_writes values ('step ' || new.run_id || ' ' || new.step_id); end;
    create temp trigger steps_updated after update on main.step_executions begin insert into row_writes values ('step ' || new.run_id || ' ' || new.step_id); end;
  `);
  const log = t.host.ctx.events as unknown as { transaction?: (work: () => unknown) => unknown };
  const original = log.transaction;
  if (!original) throw new Error('the event log has no SQLite transaction function');
  log.transaction = (work) => {
    const before = (raw.prepare('select coalesce(max(rowid), 0) as m from temp.row_writes').get() as { m: number }).m;
    const out = original(work);
    transactions.push((raw.prepare('select what from temp.row_writes where rowid > ? order by rowid').all(before) as Array<{ what: string }>).map((r) => r.what));
    return out;
  };
});

afterAll(async () => {
  vi.restoreAllMocks();
  await t.close();
});

/** The writes of `runId`'s rows, per transaction that wrote any. */
const writesOf = (runId: string) => transactions.map((tx) => tx.filter((w) => w.includes(` ${runId}`))).filter((tx) => tx.length > 0);
const twice = (tx: string[]) => tx.filter((w, i) => tx.indexOf(w) !== i);

const scenarios = {
  'a 1-step run': { steps: [{ id: 'a', tool: 'echo', arguments: { value: 1 } }] },
  'a 2-step chain': { steps: [{ id: 'a', tool: 'echo', arguments: { value: 1 } }, { id: 'b', tool: 'echo', arguments: { value: '@a' }, dependsOn: ['a'] }] },
  'a failing step': { steps: [{ id: 'x', tool: 'fail' }, { id: 'y', tool: 'echo', dependsOn: ['x'] }] },
  'a cancelled run': { steps: [{ id: 's', tool: 'slow', arguments: { ms: 20_000 } }] },
} as const;

async function runOf(name: keyof typeof scenarios): Promise<string> {
  const res = await t.api('POST', '/api/agent/run', { workflow: scenarios[name], config: auto });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const runId = res.body.runId as string;
  if (name === 'a cancelled run') {
    await t.waitFor(runId, 'step_start');
    expect((await t.api('POST', `/api/agent/${runId}/cancel`)).status).toBe(200);
  }
  await t.stream(runId);
  // the run's end commit is written before its stream ends; its hooks' commits (none here) after
  await new Promise((r) => setTimeout(r, 50));
  return runId;
}

const time = (v: unknown) => (v === null ? null : 'time');
/** The run's rows and its log, without what differs from run to run (its id, the instants). */
async function rowsOf(runId: string) {
  const db = t.host.ctx.db;
  const run = await db.selectFrom('runs').selectAll().where('id', '=', runId).executeTakeFirstOrThrow();
  const steps = await db.selectFrom('step_executions').selectAll().where('run_id', '=', runId).orderBy('step_id').execute();
  const events = await db.selectFrom('run_events').select(['seq', 'type']).where('run_id', '=', runId).orderBy('seq').execute();
  return {
    run: { ...run, id: 'r', created_at: time(run.created_at), updated_at: time(run.updated_at), finished_at: time(run.finished_at) },
    steps: steps.map((s) => ({ ...s, run_id: 'r', started_at: time(s.started_at), finished_at: time(s.finished_at), duration_ms: s.duration_ms === null ? null : 'ms' })),
    events,
  };
}

describe("a run's rows written once per commit", () => {
  for (const name of Object.keys(scenarios) as Array<keyof typeof scenarios>) {
    it(`${name}: each row once per transaction, the same rows as its commits written one by one`, async () => {
      // the reference: each commit writes its own changes (nothing folds)
      const rawWrite = RunRepository.prototype.rawWrite;
      const unfolded = vi.spyOn(RunRepository.prototype, 'rawWrite').mockImplementation(function (this: RunRepository, change) {
        const write = rawWrite.call(this, change);
        write.fold = undefined;
        return write;
      });
      const before = await runOf(name);
      unfolded.mockRestore();
      const after = await runOf(name);
      expect(await rowsOf(after)).toEqual(await rowsOf(before));
      for (const tx of writesOf(after)) expect(twice(tx)).toEqual([]);
      if (name === 'a 1-step run') {
        // the whole run is one transaction: written unfolded, its run row and step row twice each
        expect(writesOf(before)).toHaveLength(1);
        expect(twice(writesOf(before)[0] as string[]).sort()).toEqual([`run ${before}`, `step ${before} a`]);
        expect(writesOf(after)).toEqual([[`run ${after}`, `step ${after} a`]]);
      }
    });
  }
});
