import type { Problem } from './errors';

/**
 * Input steps' forms (a person's answer half way through a run): the JSON Schema subset a form may
 * use, and the field-level check of the values a person sends. Pure; the validator checks forms
 * at plan validation, the host checks values before it touches the gate, the UI renders fields.
 *
 * A form is `{type: "object", properties: {…1..30}, required?: [names]}`; a property is a string
 * (optionally `enum` of strings, `format` email|date|uri, `maxLength`), a number, an integer, a
 * boolean, or an array of strings. `title` and `description` label a field; `default` prefills it.
 */

/** How long an input step waits, in ms: at least a minute, at most 30 days, 7 days by default. */
export const INPUT_TIMEOUT_MIN_MS = 60_000;
export const INPUT_TIMEOUT_MAX_MS = 2_592_000_000;
export const INPUT_TIMEOUT_DEFAULT_MS = 7 * 24 * 3600 * 1000;
export const INPUT_FORM_MAX_FIELDS = 30;
export const INPUT_ON_TIMEOUT = ['fail', 'default'] as const;
export type InputOnTimeout = (typeof INPUT_ON_TIMEOUT)[number];

const FORMATS = new Set(['email', 'date', 'uri']);
const FIELD_KEYS = new Set(['type', 'title', 'description', 'enum', 'format', 'maxLength', 'default', 'items', 'minimum', 'maximum']);
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

type Field = { type?: unknown; enum?: unknown; format?: unknown; maxLength?: unknown; items?: { type?: unknown } };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The form's problems (of input step `stepId`), each with `field` under `form` (`form.properties.x.type`). */
export function formProblems(form: unknown, stepId = ''): Array<Pick<Problem, 'code' | 'field' | 'params'>> {
  const out: Array<Pick<Problem, 'code' | 'field' | 'params'>> = [];
  const bad = (field: string, reason: string) => out.push({ code: 'input_form_invalid', field, params: { stepId, field, reason } });
  if (!isObject(form) || form.type !== 'object' || !isObject(form.properties)) {
    bad('form', 'a form is {"type": "object", "properties": {…}}');
    return out;
  }
  const names = Object.keys(form.properties);
  if (names.length < 1 || names.length > INPUT_FORM_MAX_FIELDS) bad('form.properties', `1..${INPUT_FORM_MAX_FIELDS} fields, got ${names.length}`);
  for (const name of names) {
    const at = `form.properties.${name}`;
    const f = form.properties[name];
    if (!isObject(f)) {
      bad(at, 'a field is an object with a "type"');
      continue;
    }
    const extra = Object.keys(f).filter((k) => !FIELD_KEYS.has(k));
    if (extra.length) bad(at, `unsupported keyword(s) ${extra.join(', ')}`);
    fieldProblems(f as Field, at, bad);
  }
  if (form.required !== undefined) {
    if (!Array.isArray(form.required) || form.required.some((r) => typeof r !== 'string' || !names.includes(r))) bad('form.required', 'a list of the form\'s field names');
  }
  return out;
}

function fieldProblems(f: Field, at: string, bad: (field: string, reason: string) => void): void {
  const t = f.type;
  if (t === 'string') {
    if (f.enum !== undefined && (!Array.isArray(f.enum) || f.enum.length === 0 || f.enum.some((e) => typeof e !== 'string'))) bad(`${at}.enum`, 'a non-empty list of strings');
    if (f.format !== undefined && !FORMATS.has(String(f.format))) bad(`${at}.format`, 'email, date or uri');
    if (f.maxLength !== undefined && !(Number.isInteger(f.maxLength) && (f.maxLength as number) >= 1)) bad(`${at}.maxLength`, 'a positive integer');
  } else if (t === 'array') {
    if (!isObject(f.items) || f.items.type !== 'string') bad(`${at}.items`, 'an array field holds strings: {"type": "string"}');
  } else if (t !== 'number' && t !== 'integer' && t !== 'boolean') {
    bad(`${at}.type`, 'string, number, integer, boolean or array (of strings)');
  }
}

/** One value against its field; the reason it does not fit, or undefined. */
function valueReason(f: Field & { minimum?: unknown; maximum?: unknown }, v: unknown): string | undefined {
  switch (f.type) {
    case 'string': {
      if (typeof v !== 'string') return 'must be a string';
      if (Array.isArray(f.enum) && !f.enum.includes(v)) return `must be one of ${f.enum.map((e) => JSON.stringify(e)).join(', ')}`;
      if (typeof f.maxLength === 'number' && [...v].length > f.maxLength) return `must be at most ${f.maxLength} characters`;
      if (f.format === 'email' && !EMAIL.test(v)) return 'must be an e-mail address';
      if (f.format === 'date' && (!DATE.test(v) || Number.isNaN(Date.parse(`${v}T00:00:00Z`)))) return 'must be a date (YYYY-MM-DD)';
      if (f.format === 'uri' && !URL.canParse(v)) return 'must be an absolute URI';
      return undefined;
    }
    case 'number':
    case 'integer': {
      if (typeof v !== 'number' || !Number.isFinite(v)) return 'must be a number';
      if (f.type === 'integer' && !Number.isInteger(v)) return 'must be an integer';
      if (typeof f.minimum === 'number' && v < f.minimum) return `must be at least ${f.minimum}`;
      if (typeof f.maximum === 'number' && v > f.maximum) return `must be at most ${f.maximum}`;
      return undefined;
    }
    case 'boolean':
      return typeof v === 'boolean' ? undefined : 'must be true or false';
    case 'array':
      return Array.isArray(v) && v.every((x) => typeof x === 'string') ? undefined : 'must be a list of strings';
    default:
      return 'is not a field of the form';
  }
}

/**
 * Every field of `values` that does not satisfy `form` (a missing required field, a value of the
 * wrong type or outside its enum, format or length, a field the form does not have), each as
 * `input_value_invalid` with `field: "values.<name>"`. An empty list when the values fit.
 */
export function valueProblems(form: Record<string, unknown>, values: unknown): Problem[] {
  const problems: Problem[] = [];
  const bad = (name: string, reason: string) => problems.push({ code: 'input_value_invalid', field: `values.${name}`, params: { field: name, reason } });
  if (!isObject(values)) {
    problems.push({ code: 'input_value_invalid', field: 'values', params: { field: 'values', reason: 'must be an object of the form\'s fields' } });
    return problems;
  }
  const props = (isObject(form.properties) ? form.properties : {}) as Record<string, Field>;
  const required = Array.isArray(form.required) ? (form.required as string[]) : [];
  for (const name of required) if (values[name] === undefined || values[name] === null) bad(name, 'is required');
  for (const [name, v] of Object.entries(values)) {
    const f = Object.hasOwn(props, name) ? props[name] : undefined;
    if (!f) {
      bad(name, 'is not a field of the form');
      continue;
    }
    if (v === undefined || v === null) continue;
    const reason = valueReason(f, v);
    if (reason) bad(name, reason);
  }
  return problems;
}
