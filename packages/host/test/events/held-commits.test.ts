import type { RunEvent } from '@fengyu/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventLog, HOLD_MS } from '../../src/events/event-log';
import { SLICE_MS } from '../../src/events/turn';
import type { OpenedSqlite } from '../../src/storage/database';
import { audit, clock, openTwoRunLog, type TwoRunLog } from '../support/two-run-log';

/**
 * Held commits (the transitions of a retry-safe call that has left) may wait past their turn for
 * the commits of later turns: they are written with the first commit that is not held, or by a
 * timer once the oldest has waited `holdMs`, in queue order, and published only once written.
 */

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
let opened: OpenedSqlite;
let log: EventLog;
let fixture: TwoRunLog;
const published: string[] = [];

beforeEach(async () => {
  fixture = await openTwoRunLog('fengyu-held-', published);
  ({ opened, log } = fixture);
});

afterEach(() => fixture.close());

/** The stored events after run_created, as run + seq. */
async function stored(): Promise<string[]> {
  const rows = await opened.db.selectFrom('run_events').select(['run_id', 'seq']).where('seq', '>', 1).orderBy('rowid').execute();
  return rows.map((r) => `${r.run_id}${r.seq}`);
}

describe('held commits', () => {
  it('may wait longer than the runner\'s slice, at most half a 60 Hz display frame', () => {
    // a subscriber of a chain of worker reads sees it move at least once per half frame
    expect(new EventLog(opened.db, clock).holdMs).toBe(HOLD_MS);
    expect(HOLD_MS).toBeGreaterThan(SLICE_MS);
    expect(HOLD_MS).toBeLessThanOrEqual(1000 / 60 / 2);
  });

  it('wait past their turns and are written, then published, in queue order with the first commit that is not held', async () => {
    log.holdMs = 60_000;
    const settled: string[] = [];
    const track = (p: Promise<RunEvent[]>) => p.then((w) => settled.push(...w.map((e) => `${e.runId}${e.seq}`)));
    const first = track(log.commitGrouped('a', [audit(1)], undefined, undefined, false, true));
    await nextTurn();
    const second = track(log.commitGrouped('b', [audit(2)], undefined, undefined, true, true));
    const third = track(log.commitGrouped('a', [audit(3), audit(4)], undefined, undefined, false, true));
    await nextTurn();
    await nextTurn();
    // two turns ended: nothing written, nothing published, no caller told
    expect(await stored()).toEqual([]);
    expect(published).toEqual([]);
    expect(settled).toEqual([]);
    // a commit that is not held (even one that could be written alone) takes the queue with it, after it
    const urgent = track(log.commitGrouped('b', [audit(5)], undefined, undefined, true));
    await Promise.all([first, second, third, urgent]);
    expect(await stored()).toEqual(['a2', 'b2', 'a3', 'a4', 'b3']);
    expect(published).toEqual(['a2', 'b2', 'a3', 'a4', 'b3']);
    expect(settled).toEqual(['a2', 'b2', 'a3', 'a4', 'b3']);
  });

  it('are written by the timer once the oldest has waited holdMs, when no other commit comes', async () => {
    log.holdMs = 20;
    const written = await log.commitGrouped('a', [audit(1)], undefined, undefined, false, true);
    expect(written.map((e) => e.seq)).toEqual([2]);
    expect(await stored()).toEqual(['a2']);
    expect(published).toEqual(['a2']);
  });

  it('are written at once by a flush (a shutdown), and never a second time by the timer', async () => {
    log.holdMs = 30;
    const held = log.commitGrouped('a', [audit(1)], undefined, undefined, false, true);
    await nextTurn();
    log.flush();
    expect(await stored()).toEqual(['a2']);
    expect((await held).map((e) => e.seq)).toEqual([2]);
    // past the hold: the timer was cleared, and a later commit gets the next seq
    await new Promise((resolve) => setTimeout(resolve, 60));
    await log.commitGrouped('a', [audit(2)], undefined, undefined, true);
    expect(await stored()).toEqual(['a2', 'a3']);
    expect(published).toEqual(['a2', 'a3']);
  });

  it('held from an earlier turn do not count as another run queued in this turn (that run is not paced by them)', async () => {
    log.holdMs = 60_000;
    const held = log.commitGrouped('a', [audit(1)], undefined, undefined, false, true);
    expect(log.queuedByOthers('b')).toBe(true);
    await nextTurn();
    expect(log.queuedByOthers('b')).toBe(false);
    const mine = log.commitGrouped('b', [audit(2)], undefined, undefined, false, true);
    expect(log.queuedByOthers('a')).toBe(true);
    expect(log.queuedByOthers('b')).toBe(false);
    log.flush();
    await Promise.all([held, mine]);
    expect(await stored()).toEqual(['a2', 'b2']);
  });

  it('a commit held with a failing one of its run fails with it; another run\'s held commit is written', async () => {
    log.holdMs = 60_000;
    const boom = Object.assign(() => {
      throw new Error('the disk refused the write');
    }, {});
    const failing = log.commitGrouped('a', [audit(1)], boom, undefined, false, true);
    await nextTurn();
    const after = log.commitGrouped('a', [audit(2)], undefined, undefined, false, true);
    const other = log.commitGrouped('b', [audit(3)], undefined, undefined, false, true);
    log.flush();
    await expect(failing).rejects.toThrow('the disk refused the write');
    await expect(after).rejects.toThrow('the disk refused the write');
    expect((await other).map((e) => e.seq)).toEqual([2]);
    expect(await stored()).toEqual(['b2']);
    expect(published).toEqual(['b2']);
  });
});
