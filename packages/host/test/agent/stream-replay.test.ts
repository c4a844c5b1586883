import type { RunEvent } from '@fengyu/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EventLog } from '../../src/events/event-log';
import { auto, type SseEvent, startTestHost, type TestHost } from '../support/host';

/**
 * A stream's replay of a run created by this host is served from the committed events the log
 * keeps in memory (no database read of the events), and only while that copy is the whole stored
 * log: an event stored by another writer, or a run past the bounds, is read from the database.
 * A subscriber that attaches at any point sees every event once, in order, with or without a
 * Last-Event-ID cursor.
 */

let t: TestHost;
let log: EventLog;
const reads: string[] = [];

beforeAll(async () => {
  t = await startTestHost();
  log = t.host.ctx.events;
  const readRows = log.readRows.bind(log);
  log.readRows = ((runId: string, ...rest: [number?, number?]) => {
    reads.push(runId);
    return readRows(runId, ...rest);
  }) as typeof log.readRows;
});

afterAll(async () => {
  await t.close();
});

const start = async (steps: unknown[]) => {
  const res = await t.api('POST', '/api/agent/run', { workflow: { steps }, config: auto });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.runId as string;
};
const stored = async (runId: string) => t.host.ctx.db.selectFrom('run_events').select(['seq', 'type', 'data']).where('run_id', '=', runId).orderBy('seq').execute();
const seqs = (events: SseEvent[]) => events.map((e) => Number(e.id));
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('the replay of a stream', () => {
  it('of a run created here comes from memory and equals the stored log, frame for frame', async () => {
    const runId = await start([{ id: 'a', tool: 'echo', arguments: { value: { nested: [1, 'two'] } } }]);
    const before = reads.length;
    const seen = await t.stream(runId);
    expect(reads.slice(before)).not.toContain(runId);
    const rows = await stored(runId);
    expect(seqs(seen)).toEqual(rows.map((r) => r.seq));
    expect(seen.map((e) => e.type)).toEqual(rows.map((r) => r.type));
    for (const [i, e] of seen.entries()) {
      const { type: _t, runId: _r, seq: _s, ts: _ts, ...payload } = e.data as RunEvent & Record<string, unknown>;
      expect(payload).toEqual(JSON.parse(rows[i]?.data as string));
    }
  });

  it('reads the database when another writer stored an event the memory does not hold', async () => {
    const runId = await start([{ id: 'a', tool: 'echo', arguments: { value: 1 } }]);
    const first = await t.stream(runId);
    const n = first.length;
    await t.host.ctx.db.insertInto('run_events').values({ run_id: runId, seq: n + 1, type: 'audit', data: JSON.stringify({ kind: 'note', reason: 'written elsewhere' }), ts: new Date().toISOString() }).execute();
    const before = reads.length;
    const again = await t.stream(runId, { until: (e) => e.type === 'audit' && e.data.reason === 'written elsewhere' });
    expect(reads.slice(before)).toContain(runId);
    expect(seqs(again)).toEqual(range(1, n + 1));
    expect(again.at(-1)?.data.reason).toBe('written elsewhere');
  });

  it('of a run no longer kept (past the bounds) comes from the database, complete', async () => {
    const oldest = await start([{ id: 'a', tool: 'echo', arguments: { value: 'old' } }]);
    const want = (await t.stream(oldest)).map((e) => e.type);
    // more runs than the memory keeps
    for (let i = 0; i < 20; i++) await t.stream(await start([{ id: 'a', tool: 'echo', arguments: { value: i } }]));
    const before = reads.length;
    const seen = await t.stream(oldest);
    expect(reads.slice(before)).toContain(oldest);
    expect(seen.map((e) => e.type)).toEqual(want);
    expect(seqs(seen)).toEqual(range(1, want.length));
  });

  it('sees every event once and in order, whenever a subscriber attaches to a busy run, with or without a cursor', async () => {
    const steps = Array.from({ length: 30 }, (_, i) => ({ id: `s${i}`, tool: i % 10 === 5 ? 'slow' : 'echo', arguments: i % 10 === 5 ? { ms: 20 } : { value: i }, ...(i ? { dependsOn: [`s${i - 1}`] } : {}) }));
    const runId = await start(steps);
    const subscribers: Array<Promise<{ from: number; events: SseEvent[] }>> = [];
    // attach while the run commits: one subscriber per published event, some with a cursor
    const published: RunEvent[] = [];
    const done = new Promise<void>((resolve) => {
      const off = log.subscribe(runId, (e) => {
        published.push(e);
        const from = published.length % 3 === 0 ? Math.max(0, e.seq - 2) : 0;
        subscribers.push(t.stream(runId, from ? { lastEventId: from } : {}).then((events) => ({ from, events })));
        if (e.type === 'complete') {
          off();
          resolve();
        }
      });
    });
    await done;
    const results = await Promise.all(subscribers);
    const last = published.at(-1)?.seq as number;
    expect(results.length).toBeGreaterThan(30);
    for (const { from, events } of results) {
      expect(seqs(events)).toEqual(range(from + 1, last));
      expect(events.at(-1)?.type).toBe('complete');
    }
  });
});
