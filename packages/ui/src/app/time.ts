/**
 * Times as people read them: relative to now ("3 minutes ago", "3 分钟前") in the UI's language,
 * with the exact local date and time available on hover.
 */

const STEPS: Array<[Intl.RelativeTimeFormatUnit, number]> = [
  ['second', 60],
  ['minute', 60],
  ['hour', 24],
  ['day', 7],
  ['week', 4.345],
  ['month', 12],
  ['year', Number.POSITIVE_INFINITY],
];

/** "just now", "5 minutes ago", "in 2 hours", … for `iso` seen at `now`. */
export function relativeTime(iso: string, now: number, locale: string): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return '';
  let amount = (then - now) / 1000;
  const format = new Intl.RelativeTimeFormat(locale, { numeric: 'auto' });
  if (Math.abs(amount) < 10) return format.format(0, 'second');
  for (const [unit, size] of STEPS) {
    if (Math.abs(amount) < size) return format.format(Math.round(amount), unit);
    amount /= size;
  }
  return format.format(Math.round(amount), 'year');
}

/** The exact local date and time, for the hover title. */
export function exactTime(iso: string, locale: string): string {
  const then = Date.parse(iso);
  return Number.isNaN(then) ? '' : new Date(then).toLocaleString(locale, { dateStyle: 'full', timeStyle: 'medium' });
}

/** The local date and time in a line of text ("Dec 3, 2026, 1:00 PM", "2026年12月3日 13:00"). */
export function dateTime(iso: string, locale: string, seconds = false): string {
  const then = Date.parse(iso);
  return Number.isNaN(then) ? '' : new Date(then).toLocaleString(locale, { dateStyle: 'medium', timeStyle: seconds ? 'medium' : 'short' });
}

/**
 * How long a relative time's label stays right: seconds change it under a minute, minutes
 * under an hour, hours after that (a shown "14 seconds ago" never stays for half a minute).
 */
export function refreshAfterMs(iso: string, now: number): number {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return 60_000;
  const age = Math.abs(now - then);
  if (age < 60_000) return 1_000;
  if (age < 3_600_000) return 15_000;
  return 60_000;
}
