import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventLog } from '../../src/events/event-log';
import type { OpenedSqlite } from '../../src/storage/database';
import { audit, openTwoRunLog, type TwoRunLog } from '../support/two-run-log';

/**
 * A commit's event rows are written by multi-row insert statements (up to eight rows each): every
 * row in order with its own seq, however many the commit holds, and all of them or none.
 */

let fixture: TwoRunLog;
let opened: OpenedSqlite;
let log: EventLog;
const published: string[] = [];

beforeEach(async () => {
  fixture = await openTwoRunLog('fengyu-event-rows-', published);
  ({ opened, log } = fixture);
});

afterEach(() => fixture.close());

const stored = (runId: string) => opened.raw.prepare('select seq, type, data, ts from run_events where run_id = ? order by seq').all(runId) as Array<{ seq: number; type: string; data: string; ts: string }>;

describe("a commit's event rows", () => {
  it.each([1, 3, 8, 9, 20])('%i events: each row with its seq, type and payload, in order', async (n) => {
    const events = Array.from({ length: n }, (_, i) => audit(i + 1));
    const written = await log.commitGrouped('a', events, undefined);
    expect(written.map((e) => e.seq)).toEqual(Array.from({ length: n }, (_, i) => i + 2));
    const rows = stored('a').slice(1);
    expect(rows.map((r) => r.seq)).toEqual(written.map((e) => e.seq));
    expect(rows.map((r) => JSON.parse(r.data).n)).toEqual(Array.from({ length: n }, (_, i) => i + 1));
    expect(new Set(rows.map((r) => `${r.type} ${r.ts}`))).toEqual(new Set([`audit ${written[0]?.ts}`]));
    // the log goes on after them
    expect((await log.commitGrouped('a', [audit(0)], undefined)).map((e) => e.seq)).toEqual([n + 2]);
  });

  it('a row that cannot be written (its seq taken) fails the whole commit, the rows of earlier statements included', async () => {
    // a row already stored at the commit's ninth seq (the second statement's first row)
    opened.raw.prepare("insert into run_events (run_id, seq, type, data, ts) values ('a', 10, 'audit', '{}', 'x')").run();
    const events = Array.from({ length: 12 }, (_, i) => audit(i + 1));
    await expect(log.commitGrouped('a', events, undefined)).rejects.toThrow(/UNIQUE|constraint/i);
    expect(stored('a').map((r) => r.seq)).toEqual([1, 10]);
    // the other run's commits are not held up by it
    expect((await log.commitGrouped('b', [audit(1)], undefined)).map((e) => e.seq)).toEqual([2]);
  });
});
