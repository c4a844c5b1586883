import { fireTimes, type Recurrence } from './recurrence';

/**
 * When no host ran, and which fires of a schedule fell then, pure. Each host process records
 * the span it ran (its `hosts` row: start, then stop or last heartbeat after a crash); the gaps
 * in the union of the spans are downtime. A fire inside a gap did not run on time: the first
 * pass after the start ran one catch-up run for it or counted it missed (docs/schedules.md).
 */

export interface HostSpan {
  start: number;
  end: number;
}

export interface Downtime {
  from: number;
  until: number;
}

export interface DownFire {
  at: number;
  downFrom: number;
  downUntil: number;
}

/** The gaps between the merged spans, oldest first (nothing before the first span is known). */
export function downIntervals(spans: readonly HostSpan[]): Downtime[] {
  const sorted = [...spans].sort((a, b) => a.start - b.start);
  const out: Downtime[] = [];
  let reach: number | undefined;
  for (const s of sorted) {
    if (reach !== undefined && s.start > reach) out.push({ from: reach, until: s.start });
    reach = reach === undefined ? Math.max(s.start, s.end) : Math.max(reach, s.end);
  }
  return out;
}

/** At most this many fires are listed per downtime (a one-minute interval down for a day is not 1,440 lines). */
export const FIRES_PER_DOWNTIME = 5;

/**
 * The fires of a schedule (created at `anchor`) that fell while no host ran, newest downtime
 * first, at most `limit` in all.
 */
export function firesWhileDown(rec: Recurrence, anchor: number, downs: readonly Downtime[], limit = 10): DownFire[] {
  const out: DownFire[] = [];
  for (const d of [...downs].reverse()) {
    if (d.until <= anchor) break;
    const from = Math.max(d.from, anchor);
    // fireTimes answers instants strictly after `from`; a fire exactly at the stop is one the stopped host did not run either
    const times = fireTimes(rec, from - 1, anchor, FIRES_PER_DOWNTIME + 1).filter((t) => t >= from && t < d.until);
    for (const at of times.slice(0, FIRES_PER_DOWNTIME)) out.push({ at, downFrom: d.from, downUntil: d.until });
    if (out.length >= limit) break;
  }
  return out.slice(0, limit);
}
