import { FengYuError, PERMISSION_MODES, type PermissionMode, type Problem } from '@fengyu/protocol';
import { canonicalTimeZone, formatClockTime, MIN_INTERVAL_SECONDS, parseClockTime, type Recurrence, type Weekday } from './recurrence';

/**
 * Validation of schedule bodies (create and preview), pure. Every problem names its field and
 * has its own localized message; the first problem is thrown as the error (400) with all of
 * them in `details`, before anything is created.
 */

export const MAX_PREVIEW = 50;
export const DEFAULT_PREVIEW = 10;
export const DEFAULT_TIME = '09:00';

export interface CreateScheduleBody {
  workflowId: string;
  inputs: Record<string, unknown>;
  /** The request's `files`, as given (checked against the workflow by the service). */
  files?: unknown;
  permissionMode: PermissionMode;
  runImmediately: boolean;
  recurrence: Recurrence;
}

export interface PreviewBody {
  recurrence: Recurrence;
  /** Epoch ms; default now. */
  from?: number;
  count: number;
}

const KINDS = ['daily', 'weekly', 'monthly', 'interval', 'once'] as const;
const FIELDS: Record<(typeof KINDS)[number], string[]> = {
  daily: ['kind', 'time', 'timeZone'],
  weekly: ['kind', 'time', 'timeZone', 'weekdays'],
  monthly: ['kind', 'time', 'timeZone', 'day'],
  interval: ['kind', 'everySeconds'],
  once: ['kind', 'delaySeconds'],
};

const shown = (v: unknown): string => {
  if (v === undefined) return 'nothing';
  const s = JSON.stringify(v) ?? String(v);
  return s.length > 80 ? `${s.slice(0, 80)}…` : s;
};

const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

function problem(code: string, field: string, params: Record<string, unknown> = {}): Problem {
  return { code, field, params: { field, ...params } };
}

function fail(problems: Problem[]): never {
  const first = problems[0] as Problem;
  throw new FengYuError(first.code, first.params ?? {}, problems);
}

/**
 * The recurrence of a body, defaults filled: none at all is daily at 09:00 in `hostZone`; a
 * calendar recurrence without `time` or `timeZone` takes 09:00 and `hostZone`.
 */
export function parseRecurrence(raw: unknown, hostZone: string, field = 'recurrence'): { value?: Recurrence; problems: Problem[] } {
  if (raw === undefined || raw === null) return { value: { kind: 'daily', time: DEFAULT_TIME, timeZone: hostZone }, problems: [] };
  if (!isObject(raw) || !(KINDS as readonly unknown[]).includes(raw.kind)) {
    return { problems: [problem('schedule_recurrence_invalid', isObject(raw) ? `${field}.kind` : field, { value: shown(isObject(raw) ? raw.kind : raw) })] };
  }
  const kind = raw.kind as (typeof KINDS)[number];
  const problems: Problem[] = [];
  for (const key of Object.keys(raw)) {
    if (!FIELDS[kind].includes(key)) problems.push(problem('schedule_field_unknown', `${field}.${key}`, { kind }));
  }
  if (kind === 'interval' || kind === 'once') {
    const key = kind === 'interval' ? 'everySeconds' : 'delaySeconds';
    const v = raw[key];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < MIN_INTERVAL_SECONDS || v > 10 ** 9) {
      problems.push(problem('schedule_seconds_invalid', `${field}.${key}`, { min: MIN_INTERVAL_SECONDS, value: shown(v) }));
    }
    if (problems.length) return { problems };
    return { value: kind === 'interval' ? { kind, everySeconds: v as number } : { kind, delaySeconds: v as number }, problems };
  }
  const timeRaw = raw.time ?? DEFAULT_TIME;
  const time = typeof timeRaw === 'string' ? parseClockTime(timeRaw) : undefined;
  if (!time) problems.push(problem('schedule_time_invalid', `${field}.time`, { value: shown(timeRaw) }));
  const zoneRaw = raw.timeZone ?? hostZone;
  const timeZone = typeof zoneRaw === 'string' ? canonicalTimeZone(zoneRaw) : undefined;
  if (!timeZone) problems.push(problem('schedule_time_zone_invalid', `${field}.timeZone`, { value: shown(zoneRaw) }));
  let weekdays: Weekday[] = [];
  if (kind === 'weekly') {
    const w = raw.weekdays;
    const ok = Array.isArray(w) && w.length > 0 && w.every((d) => typeof d === 'number' && Number.isInteger(d) && d >= 1 && d <= 7);
    if (!ok) problems.push(problem('schedule_weekdays_invalid', `${field}.weekdays`, { value: shown(w) }));
    else weekdays = [...new Set(w as Weekday[])].sort((a, b) => a - b);
  }
  const day = raw.day;
  if (kind === 'monthly' && !(day === 'last' || (typeof day === 'number' && Number.isInteger(day) && day >= 1 && day <= 31))) {
    problems.push(problem('schedule_day_invalid', `${field}.day`, { value: shown(day) }));
  }
  if (problems.length || !time || !timeZone) return { problems };
  const base = { time: formatClockTime(time), timeZone };
  if (kind === 'daily') return { value: { kind, ...base }, problems };
  if (kind === 'weekly') return { value: { kind, ...base, weekdays }, problems };
  return { value: { kind, ...base, day: day as number | 'last' }, problems };
}

/** `POST /api/agent/schedules` and `task_schedule`: the body, or a 400 naming every bad field. */
export function parseCreateBody(raw: unknown, hostZone: string): CreateScheduleBody {
  const body = isObject(raw) ? raw : {};
  const problems: Problem[] = [];
  const workflowId = body.workflowId;
  if (typeof workflowId !== 'string' || workflowId.trim() === '' || workflowId.length > 100) problems.push(problem('schedule_workflow_id_invalid', 'workflowId'));
  const mode = body.permissionMode;
  if (!(PERMISSION_MODES as readonly unknown[]).includes(mode)) problems.push(problem('schedule_permission_mode_invalid', 'permissionMode', { value: shown(mode) }));
  const inputs = body.inputs ?? {};
  if (!isObject(inputs)) problems.push(problem('schedule_inputs_invalid', 'inputs'));
  const runImmediately = body.runImmediately ?? false;
  if (typeof runImmediately !== 'boolean') problems.push(problem('schedule_run_immediately_invalid', 'runImmediately'));
  const rec = parseRecurrence(body.recurrence, hostZone);
  problems.push(...rec.problems);
  const recurring = body.recurring ?? true;
  if (typeof recurring !== 'boolean') problems.push(problem('schedule_recurring_invalid', 'recurring', { value: shown(recurring) }));
  if (problems.length || !rec.value) fail(problems);
  const recurrence = recurring === false ? oneShot(rec.value) : rec.value;
  if (recurring === true && body.recurring === true && rec.value.kind === 'once') fail([problem('schedule_recurring_conflict', 'recurring', { kind: 'once' })]);
  return { workflowId: workflowId as string, inputs: inputs as Record<string, unknown>, ...(body.files !== undefined ? { files: body.files } : {}), permissionMode: mode as PermissionMode, runImmediately: runImmediately as boolean, recurrence };
}

/**
 * `recurring: false` (the one-shot form): an interval becomes a single fire after that delay; a
 * `once` stays; a calendar recurrence has no one-shot form and is refused, naming the field.
 */
function oneShot(r: Recurrence): Recurrence {
  if (r.kind === 'interval') return { kind: 'once', delaySeconds: r.everySeconds };
  if (r.kind === 'once') return r;
  return fail([problem('schedule_recurring_conflict', 'recurring', { kind: r.kind })]);
}

/** 0001-01-01T00:00:00Z and 9999-12-31T23:59:59.999Z. */
const FIRST_INSTANT = -62135596800000;
const LAST_INSTANT = 253402300799999;

/** `POST /api/agent/schedules/preview`: `{recurrence, from?, count?}`. */
export function parsePreviewBody(raw: unknown, hostZone: string): PreviewBody {
  const body = isObject(raw) ? raw : {};
  const problems: Problem[] = [];
  const rec = parseRecurrence(body.recurrence, hostZone);
  problems.push(...rec.problems);
  const count = body.count ?? DEFAULT_PREVIEW;
  if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > MAX_PREVIEW) problems.push(problem('schedule_count_invalid', 'count', { max: MAX_PREVIEW, value: shown(count) }));
  let from: number | undefined;
  if (body.from !== undefined) {
    // an instant needs an offset or Z: a bare local date-time names no instant
    // and lies in years 0001–9999, so every fire time after it is a date the calendar can show
    const at = typeof body.from === 'string' ? Date.parse(body.from) : Number.NaN;
    const ok = typeof body.from === 'string' && /(?:Z|[+-]\d{2}:?\d{2})$/i.test(body.from) && at >= FIRST_INSTANT && at <= LAST_INSTANT;
    if (!ok) problems.push(problem('schedule_from_invalid', 'from', { value: shown(body.from) }));
    else from = Date.parse(body.from as string);
  }
  if (problems.length || !rec.value) fail(problems);
  return { recurrence: rec.value, count: count as number, ...(from !== undefined ? { from } : {}) };
}
