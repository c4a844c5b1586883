import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type EventLog, GATHER_MS, GATHER_TURNS, type RawWrite } from '../../src/events/event-log';
import type { OpenedSqlite } from '../../src/storage/database';
import { audit, openTwoRunLog, type TwoRunLog } from '../support/two-run-log';

/**
 * While runs arrive side by side (commits of several runs queued, one creating its run), a group
 * commit due at a turn's end waits for the next turns' commits (bounded in turns and time, and
 * only while each turn brings more), so that one transaction carries them all. A lone run's
 * commits, and the steps of runs already going, are never delayed by it.
 */

let opened: OpenedSqlite;
let log: EventLog;
let fixture: TwoRunLog;
const published: string[] = [];

beforeEach(async () => {
  fixture = await openTwoRunLog('fengyu-gather-', published);
  ({ opened, log } = fixture);
  // turns counted, not time: a loaded machine's turns may take longer than the real bound
  log.gatherMs = 60_000;
});

afterEach(() => fixture.close());

/** The stored events after run_created, as run + seq. */
const stored = () => (opened.raw.prepare('select run_id, seq from run_events where seq > 1 order by rowid').all() as { run_id: string; seq: number }[]).map((r) => `${r.run_id}${r.seq}`);

/** A commit as a run's creating commit marks itself (its row write is left out: the runs exist). */
function creating(): RawWrite {
  const write: RawWrite = () => {};
  write.creates = true;
  return write;
}

/** Runs `fn` at the end of each of the next `n` turns of the log's loop, the turn's index given. */
function atEachTurnEnd(n: number, fn: (i: number) => void): Promise<void> {
  return new Promise((resolve) => {
    const step = (i: number) => {
      fn(i);
      if (i + 1 < n) log.turn.atEnd(() => step(i + 1));
      else resolve();
    };
    log.turn.atEnd(() => step(0));
  });
}

describe('a group commit while runs arrive side by side', () => {
  it('waits for the commits of the next turns and writes them in one transaction', async () => {
    const commits = [log.commitGrouped('a', [audit(1)], creating()), log.commitGrouped('b', [audit(2)], undefined)];
    const seen: string[][] = [];
    // each of the next two turns brings a commit; the third brings none and the group is written
    await atEachTurnEnd(4, (i) => {
      seen.push(stored());
      if (i < 2) commits.push(log.commitGrouped(i ? 'b' : 'a', [audit(10 + i)], undefined));
    });
    await Promise.all(commits);
    expect(seen.slice(0, 3)).toEqual([[], [], []]);
    expect(seen[3]).toEqual(['a2', 'b2', 'a3', 'b3']);
    expect(published).toEqual(['a2', 'b2', 'a3', 'b3']);
  });

  it('stops waiting after GATHER_TURNS turn ends even when every turn brings more', async () => {
    const commits = [log.commitGrouped('a', [audit(1)], creating()), log.commitGrouped('b', [audit(2)], undefined)];
    const seen: number[] = [];
    await atEachTurnEnd(GATHER_TURNS + 2, (i) => {
      seen.push(stored().length);
      commits.push(log.commitGrouped(i % 2 ? 'a' : 'b', [audit(20 + i)], undefined));
    });
    await Promise.all(commits);
    // GATHER_TURNS turn ends waited; the next one writes the first two and the GATHER_TURNS that came
    expect(seen.slice(0, GATHER_TURNS)).toEqual(Array(GATHER_TURNS).fill(0));
    expect(seen[GATHER_TURNS]).toBe(GATHER_TURNS + 2);
  });

  it('stops waiting once GATHER_MS have passed', async () => {
    log.gatherTurns = 1_000;
    log.gatherMs = GATHER_MS;
    const commits = [log.commitGrouped('a', [audit(1)], creating()), log.commitGrouped('b', [audit(2)], undefined)];
    const seen: number[] = [];
    await atEachTurnEnd(4, (i) => {
      seen.push(stored().length);
      if (i === 1) {
        const until = performance.now() + GATHER_MS + 1;
        while (performance.now() < until) {
          // a turn longer than the gathering may last
        }
      }
      commits.push(log.commitGrouped(i % 2 ? 'a' : 'b', [audit(30 + i)], undefined));
    });
    await Promise.all(commits);
    // the second turn outlasted the bound: the third turn's end writes the four queued by then
    expect(seen).toEqual([0, 0, 4, 5]);
  });

  it('does not delay a lone run: its commits are written at the end of their turn', async () => {
    const first = log.commitGrouped('a', [audit(1)], creating());
    const second = log.commitGrouped('a', [audit(2)], undefined);
    const seen: string[][] = [];
    await atEachTurnEnd(1, () => seen.push(stored()));
    await Promise.all([first, second]);
    expect(seen).toEqual([['a2', 'a3']]);
  });

  it('writes the group at once when the next turn brings no commit', async () => {
    const commits = [log.commitGrouped('a', [audit(1)], creating()), log.commitGrouped('b', [audit(2)], undefined)];
    const seen: string[][] = [];
    await atEachTurnEnd(2, () => seen.push(stored()));
    await Promise.all(commits);
    expect(seen).toEqual([[], ['a2', 'b2']]);
  });

  it('does not delay the steps of runs already going: they wait for this group, later turns bring nothing', async () => {
    const commits = [log.commitGrouped('a', [audit(1)], undefined), log.commitGrouped('b', [audit(2)], undefined)];
    const seen: string[][] = [];
    await atEachTurnEnd(1, () => seen.push(stored()));
    await Promise.all(commits);
    expect(seen).toEqual([['a2', 'b2']]);
  });
});
