import { checkInputs, inputContract, type JsonSchema, PERMISSION_MODES, type PermissionMode, type Recurrence, type ScheduleView, type Weekday } from '@fengyu/protocol';
import type { CreateSchedule } from './schedules.api';

/**
 * The schedule form as plain data, pure: defaults (daily at 09:00 in the browser's zone), reading
 * an existing schedule back for editing, and validation into the create body — every problem
 * keyed by its field, JSON inputs checked against the workflow's input schema the way the host
 * checks them, before anything is sent.
 */

export type Kind = Recurrence['kind'];
export const KINDS: readonly Kind[] = ['daily', 'weekly', 'monthly', 'interval', 'once'];
export type Unit = 'minutes' | 'hours';

export interface ScheduleForm {
  workflowId: string;
  kind: Kind;
  time: string;
  timeZone: string;
  weekdays: number[];
  day: number | 'last';
  amount: number;
  unit: Unit;
  inputsText: string;
  permissionMode: PermissionMode | '';
  runImmediately: boolean;
}

/** A problem of one field, worded by the page (`schedules.errors.<key>`). */
export interface FieldError {
  key: 'required' | 'time' | 'timeZone' | 'weekdays' | 'amount' | 'jsonInvalid' | 'jsonNotObject' | 'inputMissing' | 'inputType' | 'inputInvalid' | 'permissionMode';
  params?: Record<string, string | number>;
}

export type FormErrors = Record<string, FieldError>;

export const MIN_SECONDS = 60;

export function defaultForm(browserZone: string): ScheduleForm {
  return { workflowId: '', kind: 'daily', time: '09:00', timeZone: browserZone, weekdays: [1, 2, 3, 4, 5], day: 1, amount: 1, unit: 'hours', inputsText: '{}', permissionMode: '', runImmediately: false };
}

/** The form of an existing schedule (for editing); the permission mode is kept, being a deliberate choice already. */
export function formOf(s: ScheduleView, browserZone: string): ScheduleForm {
  const f: ScheduleForm = { ...defaultForm(browserZone), workflowId: s.workflowId, kind: s.recurrence.kind, permissionMode: s.permissionMode, inputsText: JSON.stringify(s.inputs ?? {}, null, 2) };
  const r = s.recurrence;
  if (r.kind === 'interval' || r.kind === 'once') {
    const seconds = r.kind === 'interval' ? r.everySeconds : r.delaySeconds;
    const hours = seconds % 3600 === 0;
    return { ...f, unit: hours ? 'hours' : 'minutes', amount: hours ? seconds / 3600 : Math.max(1, Math.round(seconds / 60)) };
  }
  f.time = r.time;
  f.timeZone = r.timeZone;
  if (r.kind === 'weekly') f.weekdays = [...r.weekdays];
  if (r.kind === 'monthly') f.day = r.day;
  return f;
}

const CLOCK = /^([01]\d|2[0-3]):[0-5]\d$/;

export function isTimeZone(zone: string): boolean {
  if (!zone.trim()) return false;
  try {
    new Intl.DateTimeFormat('en', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

/** The recurrence the form describes, or the problems of its fields. */
export function recurrenceOf(f: ScheduleForm): { recurrence?: Recurrence; errors: FormErrors } {
  const errors: FormErrors = {};
  if (f.kind === 'interval' || f.kind === 'once') {
    const seconds = f.amount * (f.unit === 'hours' ? 3600 : 60);
    if (!Number.isInteger(f.amount) || f.amount < 1 || seconds < MIN_SECONDS) errors.amount = { key: 'amount' };
    if (Object.keys(errors).length) return { errors };
    return { recurrence: f.kind === 'interval' ? { kind: 'interval', everySeconds: seconds } : { kind: 'once', delaySeconds: seconds }, errors };
  }
  if (!CLOCK.test(f.time)) errors.time = { key: 'time' };
  if (!isTimeZone(f.timeZone)) errors.timeZone = { key: 'timeZone' };
  const weekdays = [...new Set(f.weekdays)].filter((d): d is Weekday => Number.isInteger(d) && d >= 1 && d <= 7).sort((a, b) => a - b);
  if (f.kind === 'weekly' && weekdays.length === 0) errors.weekdays = { key: 'weekdays' };
  if (Object.keys(errors).length) return { errors };
  const base = { time: f.time, timeZone: f.timeZone };
  if (f.kind === 'daily') return { recurrence: { kind: 'daily', ...base }, errors };
  if (f.kind === 'weekly') return { recurrence: { kind: 'weekly', ...base, weekdays }, errors };
  return { recurrence: { kind: 'monthly', ...base, day: f.day }, errors };
}

const typeOf = (p: JsonSchema | undefined): string => {
  const t = p?.type;
  return Array.isArray(t) ? t.join('/') : typeof t === 'string' ? t : '';
};

/** The JSON inputs, checked against the workflow's input schema (field errors keyed `inputs.<name>`). */
export function inputsOf(text: string, schema: JsonSchema | undefined, fileNames: readonly string[] = []): { inputs?: Record<string, unknown>; errors: FormErrors } {
  let parsed: unknown;
  try {
    parsed = text.trim() === '' ? {} : JSON.parse(text);
  } catch (e) {
    return { errors: { inputs: { key: 'jsonInvalid', params: { reason: (e as Error).message } } } };
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return { errors: { inputs: { key: 'jsonNotObject' } } };
  const inputs = parsed as Record<string, unknown>;
  const checked = checkInputs(schema, inputs, [...inputContract(schema).sharedDirectories, ...fileNames]);
  if (checked.ok) return { inputs, errors: {} };
  const errors: FormErrors = {};
  const props = inputContract(schema).properties;
  for (const p of checked.problems) {
    const field = p.field ?? 'inputs';
    if (field === 'inputs' || field === '(root)') {
      errors.inputs = { key: 'jsonNotObject' };
      continue;
    }
    const key = `inputs.${field}`;
    if (errors[key]) continue;
    if (p.code === 'input_missing') errors[key] = { key: 'inputMissing', params: { field } };
    else if (typeOf(props[field]) && !matchesType(inputs[field], typeOf(props[field]))) errors[key] = { key: 'inputType', params: { field, expected: typeOf(props[field]) } };
    else errors[key] = { key: 'inputInvalid', params: { field } };
  }
  return { errors };
}

function matchesType(v: unknown, type: string): boolean {
  return type.split('/').some((t) => {
    if (t === 'integer') return typeof v === 'number' && Number.isInteger(v);
    if (t === 'array') return Array.isArray(v);
    if (t === 'null') return v === null;
    if (t === 'object') return !!v && typeof v === 'object' && !Array.isArray(v);
    return typeof v === t;
  });
}

/** The create body, or every field problem at once (nothing is sent while there is one). */
export function validateForm(f: ScheduleForm, schema: JsonSchema | undefined, files: CreateSchedule['files'] = []): { body?: CreateSchedule; errors: FormErrors } {
  const rec = recurrenceOf(f);
  const inp = inputsOf(
    f.inputsText,
    schema,
    (files ?? []).map((x) => x.name),
  );
  const errors: FormErrors = { ...rec.errors, ...inp.errors };
  if (!f.workflowId) errors.workflowId = { key: 'required' };
  if (!(PERMISSION_MODES as readonly string[]).includes(f.permissionMode)) errors.permissionMode = { key: 'permissionMode' };
  if (Object.keys(errors).length || !rec.recurrence || !inp.inputs) return { errors };
  return { body: { workflowId: f.workflowId, inputs: inp.inputs, permissionMode: f.permissionMode as PermissionMode, runImmediately: f.runImmediately, recurrence: rec.recurrence, ...(files?.length ? { files } : {}) }, errors };
}

/** Where a problem the host reported belongs in the form (its field names match the body's). */
export function formFieldOf(hostField: string | undefined): string {
  if (!hostField) return 'form';
  if (hostField.startsWith('inputs.')) return hostField;
  if (hostField === 'recurrence.everySeconds' || hostField === 'recurrence.delaySeconds') return 'amount';
  if (hostField.startsWith('recurrence.')) return hostField.slice('recurrence.'.length);
  return hostField;
}
