import type { Recurrence, Weekday } from '@fengyu/protocol';
import { Temporal } from 'temporal-polyfill';

/**
 * Calendar and interval arithmetic of schedules. Pure: instants are epoch milliseconds, the
 * caller passes `from` (no clock here).
 *
 * Calendar rules (daily, weekly, monthly at a clock time in a time zone):
 * - a clock time that does not exist on a day (a daylight-saving gap) fires at the same clock
 *   time moved forward by the length of the gap (02:30 in a one-hour gap fires at 03:30);
 * - a clock time that occurs twice (the repeated hour after the clocks go back) fires once, at
 *   the earlier of its two offsets;
 * - a monthly day 29, 30 or 31 fires on the last day of shorter months; `last` is always the
 *   month's last day.
 * Weekdays are ISO weekdays: Monday = 1 … Sunday = 7.
 *
 * Intervals fire at `anchor + k·everySeconds` (k ≥ 1; the anchor is the schedule's creation), so
 * a late wake-up never shifts later boundaries. They expire 7 days after the anchor: a boundary
 * at or before the expiry fires, none after. A one-shot delay fires once at `anchor + delay`.
 */

export type { Recurrence, Weekday };

export type CalendarRecurrence = Extract<Recurrence, { time: string }>;

export const MIN_INTERVAL_SECONDS = 60;
/** Interval schedules expire this long after their creation. */
export const INTERVAL_LIFETIME_MS = 7 * 24 * 3600 * 1000;

export interface ClockTime {
  hour: number;
  minute: number;
}

/** `HH:MM` (or `H:MM`), 00:00–23:59; undefined when it is not such a clock time. */
export function parseClockTime(text: string): ClockTime | undefined {
  const m = /^(\d{1,2}):(\d{2})$/.exec(text);
  if (!m) return undefined;
  const hour = Number(m[1]);
  const minute = Number(m[2]);
  if (hour > 23 || minute > 59) return undefined;
  return { hour, minute };
}

export function formatClockTime(t: ClockTime): string {
  return `${String(t.hour).padStart(2, '0')}:${String(t.minute).padStart(2, '0')}`;
}

/** The zone's canonical id (`asia/shanghai` → `Asia/Shanghai`), or undefined for an unknown zone. */
export function canonicalTimeZone(zone: string): string | undefined {
  if (zone.trim() === '' || zone.length > 100) return undefined;
  try {
    return Temporal.Instant.fromEpochMilliseconds(0).toZonedDateTimeISO(zone).timeZoneId;
  } catch {
    return undefined;
  }
}

export function isCalendar(rec: Recurrence): rec is CalendarRecurrence {
  return rec.kind === 'daily' || rec.kind === 'weekly' || rec.kind === 'monthly';
}

/** When a schedule created at `anchor` stops firing: intervals only. */
export function expiryOf(rec: Recurrence, anchor: number): number | undefined {
  return rec.kind === 'interval' ? anchor + INTERVAL_LIFETIME_MS : undefined;
}

/**
 * The first fire instant strictly after `from`, or undefined when there is none (a one-shot
 * already past, an interval past its expiry). `anchor` is the creation instant.
 */
export function nextFire(rec: Recurrence, from: number, anchor: number): number | undefined {
  switch (rec.kind) {
    case 'interval': {
      const every = rec.everySeconds * 1000;
      const k = Math.max(1, Math.floor((from - anchor) / every) + 1);
      const at = anchor + k * every;
      return at <= anchor + INTERVAL_LIFETIME_MS ? at : undefined;
    }
    case 'once': {
      const at = anchor + rec.delaySeconds * 1000;
      return at > from ? at : undefined;
    }
    default:
      return nextCalendarFire(rec, from);
  }
}

/** Up to `count` fire instants strictly after `from`, increasing. */
export function fireTimes(rec: Recurrence, from: number, anchor: number, count: number): number[] {
  const out: number[] = [];
  let cursor = from;
  while (out.length < count) {
    const next = nextFire(rec, cursor, anchor);
    if (next === undefined) break;
    out.push(next);
    cursor = next;
  }
  return out;
}

/**
 * Boundaries from `due` (a fire instant) up to and including `now`: how many are overdue and the
 * first boundary after `now`. Counting stops at `limit` (a host down for years on a one-minute
 * interval need not enumerate every minute): `count` is then a lower bound, `next` still exact.
 */
export function overdue(rec: Recurrence, due: number, now: number, anchor: number, limit = 100_000): { count: number; next: number | undefined } {
  if (due > now) return { count: 0, next: due };
  if (rec.kind === 'interval') {
    const every = rec.everySeconds * 1000;
    const expiry = anchor + INTERVAL_LIFETIME_MS;
    const last = Math.min(now, expiry);
    const count = last >= due ? Math.floor((last - due) / every) + 1 : 0;
    return { count: Math.max(count, 1), next: nextFire(rec, now, anchor) };
  }
  let count = 1;
  let next = nextFire(rec, due, anchor);
  while (next !== undefined && next <= now) {
    if (count >= limit) return { count, next: nextFire(rec, now, anchor) };
    count += 1;
    next = nextFire(rec, next, anchor);
  }
  return { count, next };
}

function clockTime(rec: CalendarRecurrence): Temporal.PlainTime {
  const t = parseClockTime(rec.time);
  if (!t) throw new RangeError(`invalid clock time ${rec.time}`);
  return Temporal.PlainTime.from(t);
}

/** The instant of `time` on `date` in `zone` (gap: forward by the gap; overlap: earlier offset). */
function instantOn(date: Temporal.PlainDate, time: Temporal.PlainTime, zone: string): number {
  return date.toPlainDateTime(time).toZonedDateTime(zone, { disambiguation: 'compatible' }).epochMilliseconds;
}

function nextCalendarFire(rec: CalendarRecurrence, from: number): number {
  const time = clockTime(rec);
  // Start a day (a month) before `from`'s local date: an instant on the previous local date can
  // never be after `from`, so nothing is skipped, and every candidate is checked against `from`.
  const today = Temporal.Instant.fromEpochMilliseconds(from).toZonedDateTimeISO(rec.timeZone).toPlainDate();
  if (rec.kind === 'monthly') {
    let month = today.toPlainYearMonth().subtract({ months: 1 });
    for (let i = 0; i < 4; i += 1, month = month.add({ months: 1 })) {
      const day = rec.day === 'last' ? month.daysInMonth : Math.min(rec.day, month.daysInMonth);
      const at = instantOn(month.toPlainDate({ day }), time, rec.timeZone);
      if (at > from) return at;
    }
  } else {
    const days = rec.kind === 'weekly' ? new Set<number>(rec.weekdays) : undefined;
    let date = today.subtract({ days: 1 });
    for (let i = 0; i < 10; i += 1, date = date.add({ days: 1 })) {
      if (days && !days.has(date.dayOfWeek)) continue;
      const at = instantOn(date, time, rec.timeZone);
      if (at > from) return at;
    }
  }
  // Unreachable for a valid recurrence (a weekly one has at least one weekday).
  throw new RangeError(`no fire instant after ${new Date(from).toISOString()} for ${JSON.stringify(rec)}`);
}
