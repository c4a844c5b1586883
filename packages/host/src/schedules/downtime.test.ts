import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { downIntervals, FIRES_PER_DOWNTIME, firesWhileDown } from './downtime';

const H = 3600_000;
const T = Date.UTC(2026, 11, 1, 0, 0, 0);

describe('downtime', () => {
  it('the gaps of the union of host spans, overlapping and nested spans merged', () => {
    expect(downIntervals([])).toEqual([]);
    expect(downIntervals([{ start: 10, end: 20 }, { start: 30, end: 40 }, { start: 15, end: 25 }, { start: 32, end: 35 }, { start: 50, end: 60 }])).toEqual([
      { from: 25, until: 30 },
      { from: 40, until: 50 },
    ]);
  });

  it('lists the fires of a daily 09:00 schedule that fell in a downtime, newest downtime first, none before the schedule existed', () => {
    const rec = { kind: 'daily', time: '09:00', timeZone: 'UTC' } as const;
    const downs = [
      { from: T - 2 * 24 * H, until: T - 24 * H }, // before the schedule: ignored
      { from: T + 8 * H, until: T + 10 * H }, // 1 Dec 08:00–10:00: the 09:00 fire
      { from: T + 24 * H + 9 * H, until: T + 24 * H + 12 * H }, // 2 Dec from exactly 09:00: that fire too
      { from: T + 3 * 24 * H + 10 * H, until: T + 4 * 24 * H + 8 * H }, // no 09:00 inside
    ];
    expect(firesWhileDown(rec, T, downs)).toEqual([
      { at: T + 24 * H + 9 * H, downFrom: T + 24 * H + 9 * H, downUntil: T + 24 * H + 12 * H },
      { at: T + 9 * H, downFrom: T + 8 * H, downUntil: T + 10 * H },
    ]);
  });

  it(`keeps at most ${FIRES_PER_DOWNTIME} fires per downtime and the limit in all`, () => {
    const rec = { kind: 'interval', everySeconds: 60 } as const;
    expect(firesWhileDown(rec, T, [{ from: T, until: T + 24 * H }])).toHaveLength(FIRES_PER_DOWNTIME);
    expect(firesWhileDown(rec, T, [{ from: T, until: T + H }, { from: T + 2 * H, until: T + 3 * H }, { from: T + 4 * H, until: T + 5 * H }], 7)).toHaveLength(7);
  });

  it('property: every listed fire lies in a gap (never while a host ran) and after the schedule existed', () => {
    const span = fc.tuple(fc.integer({ min: 0, max: 200 }), fc.integer({ min: 0, max: 30 })).map(([s, len]) => ({ start: T + s * 10 * 60_000, end: T + (s + len) * 10 * 60_000 }));
    fc.assert(
      fc.property(fc.array(span, { minLength: 1, maxLength: 8 }), fc.integer({ min: 0, max: 2000 }), fc.integer({ min: 5, max: 240 }), (spans, anchorMin, every) => {
        const anchor = T + anchorMin * 60_000;
        const fires = firesWhileDown({ kind: 'interval', everySeconds: every * 60 }, anchor, downIntervals(spans), 1000);
        for (const f of fires) {
          expect(f.at).toBeGreaterThanOrEqual(anchor);
          expect(spans.some((s) => f.at >= s.start && f.at < s.end)).toBe(false);
          expect(f.at >= f.downFrom && f.at < f.downUntil).toBe(true);
        }
      }),
    );
  });
});
