import type { RunEvent } from '@fengyu/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { NewEvent } from '../../src/events/event-log';
import { clock, openTwoRunLog, type TwoRunLog } from '../support/two-run-log';

/**
 * A written event, as published and as given back to its committer, is the new event's fields in
 * their order followed by its run, seq and timestamp (`{ ...event, runId, seq, ts }`): the log's
 * values win over a payload's own, the committer's object is not changed, and a key that a spread
 * defines as a plain property (`__proto__` from parsed JSON) stays one.
 */

let fixture: TwoRunLog;
const published: string[] = [];
const seen: RunEvent[] = [];

beforeEach(async () => {
  fixture = await openTwoRunLog('fengyu-written-', published);
  seen.length = 0;
  fixture.log.subscribe('a', (e) => seen.push(e));
});

afterEach(() => fixture.close());

const shapes = (): NewEvent[] =>
  [
    { type: 'audit', kind: 'permission', stepId: 's1', tool: 't', decision: 'allow', source: 'mode', reason: 'r' },
    { type: 'step_start', stepId: 's1', index: 1, tool: 't', arguments: { x: 1 }, attempt: 1 },
    { type: 'tool', phase: 'call', stepId: 's1', name: 't', arguments: {} },
    { type: 'audit', kind: 'test', seq: 99, runId: 'spoof', ts: 'then', n: 2 },
    JSON.parse('{"type":"audit","kind":"test","__proto__":{"polluted":true},"n":3}'),
    { type: 'audit' },
  ] as unknown as NewEvent[];

describe('a written event', () => {
  it('is the spread of the new event with the log run, seq and timestamp, key order included', async () => {
    const given = shapes();
    const copies = given.map((e) => JSON.stringify(e));
    const written = await fixture.log.commitGrouped('a', given, undefined);
    const ts = new Date(clock.now()).toISOString();
    const expected = given.map((e, i) => ({ ...(e as object), runId: 'a', seq: i + 2, ts }));
    expect(written.map((e) => JSON.stringify(e))).toEqual(expected.map((e) => JSON.stringify(e)));
    expect(seen.map((e) => JSON.stringify(e))).toEqual(expected.map((e) => JSON.stringify(e)));
    expect(given.map((e) => JSON.stringify(e))).toEqual(copies);
    const parsed = written[4] as unknown as Record<string, unknown>;
    expect(Object.hasOwn(parsed, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(parsed)).toBe(Object.prototype);
    expect((parsed as { polluted?: unknown }).polluted).toBeUndefined();
  });

  it('is the same when written alone at once (the fast path of a lone run)', async () => {
    const given = shapes().slice(0, 3);
    const written = fixture.log.commitFast('a', given);
    const ts = new Date(clock.now()).toISOString();
    expect(written?.map((e) => JSON.stringify(e))).toEqual(given.map((e, i) => JSON.stringify({ ...(e as object), runId: 'a', seq: i + 2, ts })));
  });
});
