/** The time source. Injected everywhere so pure cores and tests stay deterministic. */
export interface Clock {
  now(): number;
}

/** The wall clock, for the host as a user starts it. */
export const systemClock: Clock = { now: () => Date.now() };

const DAY_MS = 86_400_000;
/** The last instant `isoTime` formats itself: 9999-12-31T23:59:59.999Z (a later one has a signed year). */
const LAST_PLAIN_MS = 253_402_300_799_999;

/** The day `isoTime` last formatted (its first instant and its `YYYY-MM-DDT`), and the last text made. */
let day = { start: Number.NaN, prefix: '' };
let last = { ms: Number.NaN, text: '' };

const two = (n: number): string => (n < 10 ? `0${n}` : `${n}`);

/**
 * `new Date(ms).toISOString()`, the same text: the date part is made once per day and the time of
 * day from integer arithmetic (V8 formats every call through a printf). Instants it does not format
 * itself (fractions, before 1970, past year 9999, NaN) go to `toISOString`, which throws as it does.
 */
export function isoTime(ms: number): string {
  if (ms === last.ms) return last.text;
  if (!Number.isInteger(ms) || ms < 0 || ms > LAST_PLAIN_MS) return new Date(ms).toISOString();
  let t = ms - day.start;
  if (!(t >= 0 && t < DAY_MS)) {
    const start = ms - (ms % DAY_MS);
    day = { start, prefix: new Date(start).toISOString().slice(0, 11) };
    t = ms - start;
  }
  const milli = t % 1000;
  t = (t - milli) / 1000;
  const sec = t % 60;
  t = (t - sec) / 60;
  const min = t % 60;
  const text = `${day.prefix}${two((t - min) / 60)}:${two(min)}:${two(sec)}.${milli < 10 ? '00' : milli < 100 ? '0' : ''}${milli}Z`;
  last = { ms, text };
  return text;
}
