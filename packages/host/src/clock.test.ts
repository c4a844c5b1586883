import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoTime } from './clock';

const LAST = 253_402_300_799_999;

describe('isoTime', () => {
  it('is the text toISOString makes, for any instant it formats itself', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: LAST }), (ms) => {
        expect(isoTime(ms)).toBe(new Date(ms).toISOString());
      }),
      { numRuns: 20_000 },
    );
  });

  it('is the same text across a day, month and year boundary, one ms at a time, and back again', () => {
    const edges = [0, Date.UTC(2024, 1, 29), Date.UTC(2026, 0, 1), Date.UTC(2100, 2, 1), LAST - 5];
    for (const edge of edges) {
      for (let ms = Math.max(0, edge - 1500); ms <= Math.min(LAST, edge + 1500); ms++) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
      // an earlier day after a later one (a clock set back)
      for (const ms of [edge, Math.max(0, edge - 86_400_001), edge]) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    }
  });

  it('pads each part (hours, minutes, seconds, milliseconds) and repeats the last text for the same instant', () => {
    const ms = Date.UTC(2026, 11, 4, 3, 4, 5, 6);
    expect(isoTime(ms)).toBe('2026-12-04T03:04:05.006Z');
    expect(isoTime(ms)).toBe('2026-12-04T03:04:05.006Z');
    expect(isoTime(ms + 94)).toBe('2026-12-04T03:04:05.100Z');
    expect(isoTime(Date.UTC(2026, 11, 4, 23, 59, 59, 999))).toBe('2026-12-04T23:59:59.999Z');
  });

  it('hands instants it does not format (fractions, before 1970, past 9999) to toISOString, which throws on NaN as before', () => {
    for (const ms of [1.5, 1_733_300_000_123.7, -1, -86_400_000.25, -62_198_755_200_000, LAST + 1, 8.64e15]) expect(isoTime(ms)).toBe(new Date(ms).toISOString());
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY, 8.64e15 + 1]) expect(() => isoTime(bad)).toThrow(RangeError);
  });
});
