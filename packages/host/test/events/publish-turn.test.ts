
import { createServer, type Server, type Socket, connect } from 'node:net';
import type { RunEvent } from '@fengyu/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { EventLog } from '../../src/events/event-log';
import type { OpenedSqlite } from '../../src/storage/database';
import { audit, openTwoRunLog, type TwoRunLog } from '../support/two-run-log';
import { auto, startTestHost } from '../support/host';

/**
 * A group commit's transaction and its publication are two turns of the event loop: what waits
 * for the loop meanwhile (a request's bytes) is served between them. Its events are still
 * published only once written, a run's events in order, every subscriber seeing each once.
 */

let opened: OpenedSqlite;
let log: EventLog;
let fixture: TwoRunLog;
const published: string[] = [];

beforeEach(async () => {
  fixture = await openTwoRunLog('fengyu-publish-', published);
  ({ opened, log } = fixture);
});

afterEach(() => fixture.close());

/** The stored events after run_created, as run + seq, read at once. */
const stored = () => (opened.raw.prepare('select run_id, seq from run_events where seq > 1 order by rowid').all() as { run_id: string; seq: number }[]).map((r) => `${r.run_id}${r.seq}`);

/** A connected pair of loopback sockets (the far end's bytes reach the near end in the next poll). */
async function socketPair(): Promise<{ server: Server; near: Socket; far: Socket }> {
  const server = createServer();
  const accepted = new Promise<Socket>((resolve) => server.once('connection', resolve));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  const far = connect(port, '127.0.0.1');
  await new Promise<void>((resolve) => far.once('connect', resolve));
  return { server, near: await accepted, far };
}

describe('a group commit', () => {
  it('is published in a later turn than its transaction, after I/O that arrived meanwhile', async () => {
    const { server, near, far } = await socketPair();
    try {
      const seen: { storedAtEnd?: string[]; publishedAtEnd?: string[]; publishedAtIo?: string[] } = {};
      near.once('data', () => {
        seen.publishedAtIo = [...published];
      });
      const settled: string[] = [];
      const first = log.commitGrouped('a', [audit(1), audit(2)], undefined).then((w) => settled.push(...w.map((e) => `${e.runId}${e.seq}`)));
      const second = log.commitGrouped('b', [audit(3)], undefined).then((w) => settled.push(...w.map((e) => `${e.runId}${e.seq}`)));
      // registered after the group's own turn end: runs right after its transaction
      log.turn.atEnd(() => {
        seen.storedAtEnd = stored();
        seen.publishedAtEnd = [...published];
        far.write('x');
      });
      await Promise.all([first, second]);
      expect(seen.storedAtEnd).toEqual(['a2', 'a3', 'b2']);
      expect(seen.publishedAtEnd).toEqual([]);
      // the bytes written after the transaction were read before the group was published
      expect(seen.publishedAtIo).toEqual([]);
      expect(published).toEqual(['a2', 'a3', 'b2']);
      expect(settled).toEqual(['a2', 'a3', 'b2']);
    } finally {
      far.destroy();
      near.destroy();
      server.close();
    }
  });

  it('is published before a commit of its run made while its publication is pending, even one that could be written alone', async () => {
    let later: Promise<RunEvent[]> | undefined;
    const first = log.commitGrouped('a', [audit(1), audit(2)], undefined);
    log.turn.atEnd(() => {
      // written, not yet published: a solo commit of the same run waits for the next turn's group
      later = log.commitGrouped('a', [audit(3)], undefined, undefined, true);
      expect(stored()).toEqual(['a2', 'a3']);
    });
    await first;
    expect((await (later as Promise<RunEvent[]>)).map((e) => e.seq)).toEqual([4]);
    expect(stored()).toEqual(['a2', 'a3', 'a4']);
    expect(published).toEqual(['a2', 'a3', 'a4']);
    // nothing pending any more: a solo commit is written and published at once again
    const alone = log.commitGrouped('b', [audit(4)], undefined, undefined, true);
    expect(published).toEqual(['a2', 'a3', 'a4', 'b2']);
    await alone;
  });

  it('written and not yet told counts as another run\'s commit waiting (a run alone in the next turn is paced by it)', async () => {
    const first = log.commitGrouped('b', [audit(1)], undefined);
    expect(log.queuedByOthers('a')).toBe(true);
    const seen: boolean[] = [];
    log.turn.atEnd(() => {
      // written, its caller not told yet: run a is not alone, run b is
      seen.push(log.queuedByOthers('a'), log.queuedByOthers('b'));
    });
    await first;
    expect(seen).toEqual([true, false]);
    expect(log.queuedByOthers('a')).toBe(false);
  });

  it('written but not yet published is published by a flush (a shutdown), and only once', async () => {
    const first = log.commitGrouped('a', [audit(1)], undefined);
    let atFlush: string[] = [];
    log.turn.atEnd(() => {
      log.flush();
      atFlush = [...published];
    });
    await first;
    await new Promise((resolve) => setImmediate(resolve));
    expect(atFlush).toEqual(['a2']);
    expect(published).toEqual(['a2']);
  });
});

describe("a run's replay memory", () => {
  it('answers only while every event written of the run is published: not between a transaction and its publication', async () => {
    const before = log.recentAfter('a', 0);
    expect(before?.types).toEqual(['run_created']);
    const first = log.commitGrouped('a', [audit(1), audit(2)], undefined);
    let between: unknown = 'not asked';
    log.turn.atEnd(() => {
      expect(stored()).toEqual(['a2', 'a3']);
      between = log.recentAfter('a', 0);
    });
    await first;
    // written and not yet published: the stream reads the rows instead
    expect(between).toBeUndefined();
    const after = log.recentAfter('a', 0);
    expect(after?.types).toEqual(['run_created', 'audit', 'audit']);
    expect(log.recentAfter('a', 1)?.first).toBe(2);
    // a run with nothing written since: answered too
    expect(log.recentAfter('b', 0)?.types).toEqual(['run_created']);
  });
});

describe('a host running chains side by side', () => {
  it('streams every event of every run once, in order, to subscribers connected before and during the run', async () => {
    const t = await startTestHost();
    try {
      const steps = Array.from({ length: 40 }, (_, i) => ({ id: `s${i}`, tool: 'echo', arguments: { value: i }, ...(i ? { dependsOn: [`s${i - 1}`] } : {}) }));
      const runs = await Promise.all(
        Array.from({ length: 8 }, async (_, k) => {
          const res = await t.api('POST', '/api/agent/run', { workflow: { steps }, config: auto });
          expect(res.status, JSON.stringify(res.body)).toBe(200);
          const runId = res.body.runId as string;
          // half the subscribers attach at once, half after a few steps have been committed
          if (k % 2) await t.waitFor(runId, 'step_complete');
          const [early, late] = await Promise.all([t.stream(runId), t.stream(runId)]);
          return { runId, early, late };
        }),
      );
      for (const { runId, early, late } of runs) {
        const rows = await t.host.ctx.db.selectFrom('run_events').select(['seq', 'type']).where('run_id', '=', runId).orderBy('seq').execute();
        expect(rows.at(-1)?.type).toBe('complete');
        for (const seen of [early, late]) {
          expect(seen.map((e) => Number(e.id))).toEqual(rows.map((r) => r.seq));
          expect(seen.map((e) => e.type)).toEqual(rows.map((r) => r.type));
        }
        expect(early.filter((e) => e.type === 'step_complete')).toHaveLength(40);
      }
    } finally {
      await t.close();
    }
  }, 60_000);
});

describe('a runner that yields after a slice', () => {
  it('resumes only after the group commit queued in its slice is published: a slice\'s frames go out before the next slice runs', async () => {
    const first = log.commitGrouped('a', [audit(1), audit(2)], undefined);
    // a turn long enough to yield in (the slice is measured from the turn's first call)
    const until = performance.now() + 3;
    while (performance.now() < until) {
      // busy, as a runner's slice of steps answered from memory
    }
    const yielded = log.turn.yieldIfLong();
    expect(yielded).toBeDefined();
    await yielded;
    // resumed: the group was written at the turn's end and published before this continuation
    expect(stored()).toEqual(['a2', 'a3']);
    expect(published).toEqual(['a2', 'a3']);
    await first;
  });
});
