import type Database from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type RunRow, RunRepository } from '../../src/agent/run.repository';
import { EventLog, type RawWrite } from '../../src/events/event-log';
import type { OpenedSqlite } from '../../src/storage/database';
import { audit, clock, openTwoRunLog, type TwoRunLog } from '../support/two-run-log';

/**
 * A commit whose write inserts its run's row (`creates`) numbers the run's events from 1 without
 * reading the log (the run has none: an event references its run's row). When that insert fails
 * (the id exists), nothing of the commit is written and the existing run's numbering goes on.
 */

let fixture: TwoRunLog;
let opened: OpenedSqlite;
let log: EventLog;
const published: string[] = [];
const at = '2026-03-01T00:00:00.000Z';

function creating(repo: RunRepository, id: string): RawWrite {
  const row: RunRow = { id, owner: 'alice', goal: 'g', status: 'running', plan: null, config: '{}', inputs: '{}', files: null, gate: null, summary: null, error: null, result: null, parent_run_id: null, origin: 'api', sandbox: 'none', workflow_id: null, workflow_version: null, last_seq: 0, created_at: at, updated_at: at, finished_at: null };
  const write: RawWrite = (raw) => repo.insertRaw(raw, row);
  write.creates = true;
  return write;
}

const created = { type: 'run_created', status: 'running', origin: 'api' } as never;
const stored = (runId: string) => (opened.raw.prepare('select seq, type from run_events where run_id = ? order by seq').all(runId) as Array<{ seq: number; type: string }>).map((r) => `${r.seq}:${r.type}`);

/** How many times the log's highest seq was read (prepared statements' `get`, by their text). */
function countSeqReads(raw: Database.Database): { count: () => number; restore: () => void } {
  const proto = Object.getPrototypeOf(raw.prepare('select 1')) as { get: (...a: unknown[]) => unknown };
  let n = 0;
  const original = proto.get;
  proto.get = function (this: { source: string }, ...a: unknown[]) {
    if (this.source.includes('max(seq)')) n += 1;
    return original.apply(this, a);
  };
  return { count: () => n, restore: () => void (proto.get = original) };
}

beforeEach(async () => {
  fixture = await openTwoRunLog('fengyu-created-seq-', published);
  ({ opened, log } = fixture);
});

afterEach(() => fixture.close());

describe('a commit that creates its run', () => {
  it('numbers the new run from 1 without reading its log, in a group with other runs', async () => {
    const repo = new RunRepository(opened.db);
    const reads = countSeqReads(opened.raw);
    try {
      const c1 = log.commitGrouped('c', [created, audit(1)], creating(repo, 'c'));
      const a = log.commitGrouped('a', [audit(2)], undefined);
      const c2 = log.commitGrouped('c', [audit(3)], undefined);
      const written = (await Promise.all([c1, a, c2])).map((w) => w.map((e) => `${e.runId}${e.seq}`));
      expect(written).toEqual([['c1', 'c2'], ['a2'], ['c3']]);
      expect(reads.count()).toBe(0);
    } finally {
      reads.restore();
    }
    expect(stored('c')).toEqual(['1:run_created', '2:audit', '3:audit']);
    expect(stored('a')).toEqual(['1:run_created', '2:audit']);
  });

  it('whose run exists writes nothing, and the existing run goes on from its last event (a new log reads it)', async () => {
    await log.commitGrouped('a', [audit(1), audit(2)], undefined);
    expect(stored('a')).toEqual(['1:run_created', '2:audit', '3:audit']);
    // another process's log: it knows nothing of `a`
    const fresh = new EventLog(opened.db, clock);
    const repo = new RunRepository(opened.db);
    const again = fresh.commitGrouped('a', [created], creating(repo, 'a'));
    const b = fresh.commitGrouped('b', [audit(3)], undefined);
    await expect(again).rejects.toThrow(/UNIQUE|constraint/i);
    expect((await b).map((e) => e.seq)).toEqual([2]);
    expect(stored('a')).toEqual(['1:run_created', '2:audit', '3:audit']);
    const next = await fresh.commitGrouped('a', [audit(4)], undefined);
    expect(next.map((e) => e.seq)).toEqual([4]);
    expect(stored('a')).toEqual(['1:run_created', '2:audit', '3:audit', '4:audit']);
    fresh.flush();
  });
});
