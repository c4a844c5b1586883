import type { RunEvent } from '@fengyu/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { frame, payloadJson } from '../../src/events/frames';

/**
 * A run event's SSE frame made from its payload's stored text is the frame of the JSON of
 * `{ type, ...payload, runId, seq, ts }`, whatever the order in which runs, types and timestamps
 * follow one another (the pieces kept for the last run and timestamp are switched, never stale).
 * (Payload keys here are not integer-like: JSON.stringify puts those first, the frame keeps `type` first.)
 */

const plain = (e: RunEvent): string => `id: ${e.seq}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;

const text = fc.oneof(fc.constantFrom('a', 'b', 'run"1', 'ü\\n', ''), fc.string({ maxLength: 6 }));

describe('an SSE frame from stored payload text', () => {
  it('equals the frame of the whole event for any sequence of runs, types, timestamps and payloads', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ type: fc.constantFrom('audit', 'tool', 'step_complete', 'x"y'), runId: text, seq: fc.nat({ max: 100_000 }), ts: text, payload: fc.dictionary(fc.string({ maxLength: 4 }).map((k) => `k${k}`), fc.jsonValue(), { maxKeys: 3 }) }), { minLength: 1, maxLength: 12 }),
        (list) => {
          for (const { type, runId, seq, ts, payload } of list) {
            const e = { type, ...payload, runId, seq, ts } as unknown as RunEvent;
            payloadJson.set(e, JSON.stringify(payload));
            expect(frame(e)).toBe(plain(e));
          }
        },
      ),
      { numRuns: 400 },
    );
  });

  it('is the same text each time an event is framed, whatever was framed in between', () => {
    const a = { type: 'tool', phase: 'result', stepId: 's1', runId: 'r', seq: 3, ts: 't1' } as unknown as RunEvent;
    const b = { type: 'audit', kind: 'note', runId: 'r', seq: 4, ts: 't1' } as unknown as RunEvent;
    const c = { type: 'cancel_requested', runId: 'q', seq: 1, ts: 't2' } as unknown as RunEvent;
    payloadJson.set(a, '{"phase":"result","stepId":"s1"}');
    payloadJson.set(b, '{"kind":"note"}');
    const first = [a, b, c].map(frame);
    expect(first).toEqual([a, b, c].map(plain));
    // a second subscriber of each event in turn, then the events again in another order
    for (const e of [a, a, b, b, c, c, c, a, b, a]) expect(frame(e)).toBe(plain(e));
  });
});
