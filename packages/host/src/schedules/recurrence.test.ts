import fc from 'fast-check';
import { Temporal } from 'temporal-polyfill';
import { describe, expect, it } from 'vitest';
import { canonicalTimeZone, fireTimes, INTERVAL_LIFETIME_MS, nextFire, overdue, parseClockTime, type Recurrence, type Weekday } from './recurrence';

/** Fire instants shown as zoned wall times, so expectations read like a calendar. */
const local = (ms: number, zone: string) => Temporal.Instant.fromEpochMilliseconds(ms).toZonedDateTimeISO(zone).toString();
const at = (iso: string) => Date.parse(iso);
const times = (rec: Recurrence, fromIso: string, n: number, zone: string) => fireTimes(rec, at(fromIso), at(fromIso), n).map((t) => local(t, zone));

describe('daylight-saving matrix', () => {
  it('New York: the gap moves 02:30 forward by the gap; the repeated 01:30 fires once, at the earlier offset', () => {
    const zone = 'America/New_York';
    expect(times({ kind: 'daily', time: '02:30', timeZone: zone }, '2026-03-06T12:00:00Z', 4, zone)).toEqual([
      '2026-03-07T02:30:00-05:00[America/New_York]',
      '2026-03-08T03:30:00-04:00[America/New_York]',
      '2026-03-09T02:30:00-04:00[America/New_York]',
      '2026-03-10T02:30:00-04:00[America/New_York]',
    ]);
    expect(times({ kind: 'daily', time: '01:30', timeZone: zone }, '2026-10-31T12:00:00Z', 3, zone)).toEqual([
      '2026-11-01T01:30:00-04:00[America/New_York]',
      '2026-11-02T01:30:00-05:00[America/New_York]',
      '2026-11-03T01:30:00-05:00[America/New_York]',
    ]);
    // From inside the repeated hour (after the earlier 01:30 passed), the later 01:30 is not a second fire.
    const inside = at('2026-11-01T05:45:00Z'); // 01:45 EDT, the first pass
    expect(local(nextFire({ kind: 'daily', time: '01:30', timeZone: zone }, inside, inside) as number, zone)).toBe('2026-11-02T01:30:00-05:00[America/New_York]');
  });

  it('Berlin: spring gap and autumn overlap (last Sundays of March and October)', () => {
    const zone = 'Europe/Berlin';
    expect(times({ kind: 'daily', time: '02:30', timeZone: zone }, '2026-03-28T12:00:00Z', 2, zone)).toEqual([
      '2026-03-29T03:30:00+02:00[Europe/Berlin]',
      '2026-03-30T02:30:00+02:00[Europe/Berlin]',
    ]);
    expect(times({ kind: 'daily', time: '02:30', timeZone: zone }, '2026-10-24T12:00:00Z', 2, zone)).toEqual([
      '2026-10-25T02:30:00+02:00[Europe/Berlin]',
      '2026-10-26T02:30:00+01:00[Europe/Berlin]',
    ]);
  });

  it('Sydney (southern hemisphere): overlap in April, gap in October', () => {
    const zone = 'Australia/Sydney';
    expect(times({ kind: 'daily', time: '02:30', timeZone: zone }, '2026-04-04T00:00:00Z', 2, zone)).toEqual([
      '2026-04-05T02:30:00+11:00[Australia/Sydney]',
      '2026-04-06T02:30:00+10:00[Australia/Sydney]',
    ]);
    expect(times({ kind: 'daily', time: '02:30', timeZone: zone }, '2026-10-03T00:00:00Z', 2, zone)).toEqual([
      '2026-10-04T03:30:00+11:00[Australia/Sydney]',
      '2026-10-05T02:30:00+11:00[Australia/Sydney]',
    ]);
  });

  it('Lord Howe (a 30-minute shift): the gap moves 02:15 forward by 30 minutes; 01:45 repeats and fires once', () => {
    const zone = 'Australia/Lord_Howe';
    expect(times({ kind: 'daily', time: '02:15', timeZone: zone }, '2026-10-03T00:00:00Z', 2, zone)).toEqual([
      '2026-10-04T02:45:00+11:00[Australia/Lord_Howe]',
      '2026-10-05T02:15:00+11:00[Australia/Lord_Howe]',
    ]);
    expect(times({ kind: 'daily', time: '01:45', timeZone: zone }, '2026-04-04T00:00:00Z', 2, zone)).toEqual([
      '2026-04-05T01:45:00+11:00[Australia/Lord_Howe]',
      '2026-04-06T01:45:00+10:30[Australia/Lord_Howe]',
    ]);
  });

  it('Shanghai and UTC (no daylight saving): the same wall time every day', () => {
    for (const zone of ['Asia/Shanghai', 'UTC']) {
      const got = times({ kind: 'daily', time: '09:00', timeZone: zone }, '2026-03-01T00:00:00Z', 400, zone);
      expect(new Set(got.map((s) => s.slice(10, 25))).size).toBe(1);
      expect(got[0]?.slice(0, 10)).toBe('2026-03-01');
    }
  });

  it('weekly: several ISO weekdays, across a DST change', () => {
    const zone = 'Europe/Berlin';
    // 2026-03-27 is a Friday; Monday = 1, Wednesday = 3, Friday = 5, Sunday = 7
    expect(times({ kind: 'weekly', time: '02:30', timeZone: zone, weekdays: [1, 3, 5, 7] }, '2026-03-26T12:00:00Z', 5, zone)).toEqual([
      '2026-03-27T02:30:00+01:00[Europe/Berlin]',
      '2026-03-29T03:30:00+02:00[Europe/Berlin]',
      '2026-03-30T02:30:00+02:00[Europe/Berlin]',
      '2026-04-01T02:30:00+02:00[Europe/Berlin]',
      '2026-04-03T02:30:00+02:00[Europe/Berlin]',
    ]);
  });
});

describe('month ends and leap years', () => {
  const zone = 'America/New_York';
  it('days 29–31 clamp to the last day of shorter months; February of a leap year has 29', () => {
    const d31 = times({ kind: 'monthly', time: '09:00', timeZone: zone, day: 31 }, '2027-12-15T00:00:00Z', 6, zone).map((s) => s.slice(0, 10));
    expect(d31).toEqual(['2027-12-31', '2028-01-31', '2028-02-29', '2028-03-31', '2028-04-30', '2028-05-31']);
    const d29 = times({ kind: 'monthly', time: '09:00', timeZone: zone, day: 29 }, '2026-01-15T00:00:00Z', 3, zone).map((s) => s.slice(0, 10));
    expect(d29).toEqual(['2026-01-29', '2026-02-28', '2026-03-29']);
    const d30 = times({ kind: 'monthly', time: '09:00', timeZone: zone, day: 30 }, '2100-01-15T00:00:00Z', 3, zone).map((s) => s.slice(0, 10));
    expect(d30).toEqual(['2100-01-30', '2100-02-28', '2100-03-30']); // 2100 is not a leap year
  });

  it('"last" is always the last day', () => {
    const last = times({ kind: 'monthly', time: '23:59', timeZone: zone, day: 'last' }, '2027-11-02T00:00:00Z', 5, zone).map((s) => s.slice(0, 10));
    expect(last).toEqual(['2027-11-30', '2027-12-31', '2028-01-31', '2028-02-29', '2028-03-31']);
  });

  it('a monthly time in the gap of its day moves forward by the gap', () => {
    expect(times({ kind: 'monthly', time: '02:30', timeZone: zone, day: 8 }, '2026-02-10T00:00:00Z', 2, zone)).toEqual([
      '2026-03-08T03:30:00-04:00[America/New_York]',
      '2026-04-08T02:30:00-04:00[America/New_York]',
    ]);
  });

  it('fires exactly at a boundary only when it is after "from"', () => {
    const rec: Recurrence = { kind: 'daily', time: '09:00', timeZone: 'UTC' };
    expect(new Date(nextFire(rec, at('2026-05-01T09:00:00Z'), 0) as number).toISOString()).toBe('2026-05-02T09:00:00.000Z');
    expect(new Date(nextFire(rec, at('2026-05-01T08:59:59.999Z'), 0) as number).toISOString()).toBe('2026-05-01T09:00:00.000Z');
  });
});

describe('intervals and one-shot delays', () => {
  it('boundaries are anchored at creation, whatever "from" is', () => {
    const anchor = at('2026-01-01T00:00:10Z');
    const rec: Recurrence = { kind: 'interval', everySeconds: 90 };
    // boundaries 00:01:40, 00:03:10, 00:04:40, 00:06:10: a wake-up at 00:05:07 fires at 00:06:10
    expect(new Date(nextFire(rec, at('2026-01-01T00:05:07Z'), anchor) as number).toISOString()).toBe('2026-01-01T00:06:10.000Z');
    expect(new Date(nextFire(rec, anchor, anchor) as number).toISOString()).toBe('2026-01-01T00:01:40.000Z');
  });

  it('expires 7 days after creation (a boundary on the expiry still fires)', () => {
    const anchor = 1_000_000;
    const rec: Recurrence = { kind: 'interval', everySeconds: 24 * 3600 };
    const all = fireTimes(rec, anchor, anchor, 100);
    expect(all.length).toBe(7);
    expect(all.at(-1)).toBe(anchor + INTERVAL_LIFETIME_MS);
    expect(nextFire(rec, anchor + INTERVAL_LIFETIME_MS, anchor)).toBeUndefined();
  });

  it('a one-shot fires once', () => {
    const rec: Recurrence = { kind: 'once', delaySeconds: 120 };
    expect(fireTimes(rec, 0, 0, 10)).toEqual([120_000]);
    expect(nextFire(rec, 120_000, 0)).toBeUndefined();
  });

  it('overdue boundaries after downtime: counted, and the next boundary after now', () => {
    const rec: Recurrence = { kind: 'interval', everySeconds: 60 };
    expect(overdue(rec, 60_000, 60_000 * 5 + 30_000, 0)).toEqual({ count: 5, next: 360_000 });
    const daily: Recurrence = { kind: 'daily', time: '09:00', timeZone: 'UTC' };
    const due = at('2026-05-01T09:00:00Z');
    expect(overdue(daily, due, at('2026-05-04T10:00:00Z'), 0)).toEqual({ count: 4, next: at('2026-05-05T09:00:00Z') });
    expect(overdue(daily, due, at('2026-05-01T08:00:00Z'), 0)).toEqual({ count: 0, next: due });
  });
});

describe('parsing', () => {
  it('clock times and zones', () => {
    expect(parseClockTime('09:00')).toEqual({ hour: 9, minute: 0 });
    expect(parseClockTime('9:05')).toEqual({ hour: 9, minute: 5 });
    for (const bad of ['25:00', '24:00', '12:60', '0900', '9', '', '09:00:00', ' 9:00']) expect(parseClockTime(bad)).toBeUndefined();
    expect(canonicalTimeZone('asia/shanghai')).toBe('Asia/Shanghai');
    expect(canonicalTimeZone('Mars/Olympus_Mons')).toBeUndefined();
    expect(canonicalTimeZone('')).toBeUndefined();
  });
});

const ZONES = ['America/New_York', 'Europe/Berlin', 'Australia/Sydney', 'Australia/Lord_Howe', 'Asia/Shanghai', 'UTC', 'America/Santiago', 'Asia/Kolkata'];
const timeArb = fc.record({ hour: fc.integer({ min: 0, max: 23 }), minute: fc.integer({ min: 0, max: 59 }) }).map(({ hour, minute }) => `${String(hour).padStart(2, '0')}:${String(minute).padStart(2, '0')}`);
const zoneArb = fc.constantFrom(...ZONES);
const recurrenceArb: fc.Arbitrary<Recurrence> = fc.oneof(
  fc.record({ kind: fc.constant('daily' as const), time: timeArb, timeZone: zoneArb }),
  fc.record({
    kind: fc.constant('weekly' as const),
    time: timeArb,
    timeZone: zoneArb,
    weekdays: fc.uniqueArray(fc.integer({ min: 1, max: 7 }), { minLength: 1, maxLength: 7 }).map((w) => w as Weekday[]),
  }),
  fc.record({ kind: fc.constant('monthly' as const), time: timeArb, timeZone: zoneArb, day: fc.oneof(fc.integer({ min: 1, max: 31 }), fc.constant('last' as const)) }),
  fc.record({ kind: fc.constant('interval' as const), everySeconds: fc.integer({ min: 60, max: 8 * 24 * 3600 }) }),
  fc.record({ kind: fc.constant('once' as const), delaySeconds: fc.integer({ min: 60, max: 10 ** 7 }) }),
);
// 1990 … 2060: both sides of today's rules, historical zone changes included
const instantArb = fc.integer({ min: Date.UTC(1990, 0, 1), max: Date.UTC(2060, 0, 1) });

describe('properties', () => {
  it('the next fire is always after "from", and the sequence strictly increases', () => {
    fc.assert(
      fc.property(recurrenceArb, instantArb, fc.integer({ min: 0, max: 10 * 24 * 3600 * 1000 }), (rec, from, back) => {
        const anchor = from - back;
        const seq = fireTimes(rec, from, anchor, 12);
        if (rec.kind !== 'interval' && rec.kind !== 'once') expect(seq.length).toBe(12);
        if (seq.length > 0) expect(seq[0]).toBeGreaterThan(from);
        for (let i = 1; i < seq.length; i += 1) expect(seq[i] as number).toBeGreaterThan(seq[i - 1] as number);
      }),
      { numRuns: 400 },
    );
  });

  it('a calendar fire is at its clock time, or later by at most the gap it fell in', () => {
    fc.assert(
      fc.property(recurrenceArb, instantArb, (rec, from) => {
        if (!('time' in rec)) return;
        for (const t of fireTimes(rec, from, from, 6)) {
          const z = Temporal.Instant.fromEpochMilliseconds(t).toZonedDateTimeISO(rec.timeZone);
          const [h, m] = rec.time.split(':').map(Number) as [number, number];
          const wanted = h * 60 + m;
          const got = z.hour * 60 + z.minute;
          if (got !== wanted) {
            // only in a gap: the wanted wall time does not exist on that date
            const wall = z.toPlainDate().toPlainDateTime({ hour: h, minute: m });
            expect(() => wall.toZonedDateTime(rec.timeZone, { disambiguation: 'reject' })).toThrow(RangeError);
            expect(got).toBeGreaterThan(wanted);
            expect(got - wanted).toBeLessThanOrEqual(120);
          }
          if (rec.kind === 'weekly') expect(rec.weekdays).toContain(z.dayOfWeek);
          if (rec.kind === 'monthly') expect(z.day).toBe(rec.day === 'last' ? z.daysInMonth : Math.min(rec.day, z.daysInMonth));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('a daily schedule never skips a local date', () => {
    fc.assert(
      fc.property(timeArb, zoneArb, instantArb, (time, timeZone, from) => {
        const seq = fireTimes({ kind: 'daily', time, timeZone }, from, from, 30).map((t) => Temporal.Instant.fromEpochMilliseconds(t).toZonedDateTimeISO(timeZone).toPlainDate());
        for (let i = 1; i < seq.length; i += 1) expect((seq[i - 1] as Temporal.PlainDate).add({ days: 1 }).equals(seq[i] as Temporal.PlainDate)).toBe(true);
      }),
      { numRuns: 200 },
    );
  });

  it('overdue counts exactly the boundaries up to now', () => {
    fc.assert(
      fc.property(recurrenceArb, instantArb, fc.integer({ min: 0, max: 12 * 24 * 3600 * 1000 }), (rec, from, span) => {
        const due = nextFire(rec, from, from);
        if (due === undefined) return;
        const now = due + span;
        const seq = [due, ...fireTimes(rec, due, from, 300)].filter((t) => t <= now);
        if (seq.length >= 300) return;
        const o = overdue(rec, due, now, from);
        expect(o.count).toBe(seq.length);
        expect(o.next).toBe(nextFire(rec, now, from));
      }),
      { numRuns: 80 },
    );
  });
});
