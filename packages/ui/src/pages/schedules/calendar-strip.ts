/**
 * A small calendar picture of coming fires, pure: whole weeks (Monday first) from the week of
 * `now`, each day with the local times (in the schedule's zone) at which it fires.
 */

export interface StripDay {
  /** YYYY-MM-DD in the zone. */
  date: string;
  day: number;
  /** ISO weekday, Monday = 1. */
  weekday: number;
  today: boolean;
  past: boolean;
  /** HH:MM of each fire that day, in order. */
  fires: string[];
}

function partsIn(ms: number, timeZone: string): { date: string; time: string } {
  const f = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
  const p = Object.fromEntries(f.formatToParts(new Date(ms)).map((x) => [x.type, x.value]));
  return { date: `${p.year}-${p.month}-${p.day}`, time: `${p.hour}:${p.minute}` };
}

const DAY = 86_400_000;
const isoDate = (utc: number) => new Date(utc).toISOString().slice(0, 10);

export function calendarStrip(times: readonly string[], timeZone: string, now: number, weeks = 5): StripDay[] {
  const today = partsIn(now, timeZone).date;
  const todayUtc = Date.parse(`${today}T00:00:00Z`);
  const weekday = ((new Date(todayUtc).getUTCDay() + 6) % 7) + 1;
  const start = todayUtc - (weekday - 1) * DAY;
  const byDate = new Map<string, string[]>();
  for (const t of times) {
    const ms = Date.parse(t);
    if (Number.isNaN(ms)) continue;
    const p = partsIn(ms, timeZone);
    const list = byDate.get(p.date) ?? [];
    list.push(p.time);
    byDate.set(p.date, list);
  }
  const days: StripDay[] = [];
  for (let i = 0; i < weeks * 7; i++) {
    const utc = start + i * DAY;
    const date = isoDate(utc);
    days.push({ date, day: new Date(utc).getUTCDate(), weekday: (i % 7) + 1, today: date === today, past: date < today, fires: byDate.get(date) ?? [] });
  }
  return days;
}

/** The zones the picker offers: the runtime's list, with the browser's zone and UTC always present. */
export function timeZones(browserZone: string): string[] {
  const intl = Intl as unknown as { supportedValuesOf?: (k: string) => string[] };
  const list = intl.supportedValuesOf ? intl.supportedValuesOf('timeZone') : [];
  return [...new Set([browserZone, 'UTC', ...list])];
}
