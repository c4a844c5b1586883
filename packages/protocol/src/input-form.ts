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
/** The longest an input step may wait: 30 days, in ms. */
export const INPUT_TIMEOUT_MAX_MS = 2_592_000_000;
/** How long an input step waits when it sets no `timeoutMs`: 7 days, in ms. */
export const INPUT_TIMEOUT_DEFAULT_MS = 7 * 24 * 3600 * 1000;
/** The most fields (properties) a form may have. */
export const INPUT_FORM_MAX_FIELDS = 30;
/** What an unanswered input step does at its timeout: `fail` (`gate_expired`) or complete with its `default`s. */
export const INPUT_ON_TIMEOUT = ['fail', 'default'] as const;
/** One of `INPUT_ON_TIMEOUT`. */
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

/** Why a value does not fit its field: the rule (its code is `input_value_<rule>`) and its parameters. */
type Misfit = { rule: string; params?: Record<string, unknown> };

/** One value against its field; why it does not fit, or undefined. */
function valueMisfit(f: Field & { minimum?: unknown; maximum?: unknown }, v: unknown): Misfit | undefined {
  switch (f.type) {
    case 'string': {
      if (typeof v !== 'string') return { rule: 'not_string' };
      if (Array.isArray(f.enum) && !f.enum.includes(v)) return { rule: 'enum', params: { options: f.enum.map((e) => JSON.stringify(e)).join(', ') } };
      if (typeof f.maxLength === 'number' && [...v].length > f.maxLength) return { rule: 'too_long', params: { max: f.maxLength } };
      if (f.format === 'email' && !EMAIL.test(v)) return { rule: 'email' };
      if (f.format === 'date' && (!DATE.test(v) || Number.isNaN(Date.parse(`${v}T00:00:00Z`)))) return { rule: 'date' };
      if (f.format === 'uri' && !URL.canParse(v)) return { rule: 'uri' };
      return undefined;
    }
    case 'number':
    case 'integer': {
      if (typeof v !== 'number' || !Number.isFinite(v)) return { rule: 'not_number' };
      if (f.type === 'integer' && !Number.isInteger(v)) return { rule: 'not_integer' };
      if (typeof f.minimum === 'number' && v < f.minimum) return { rule: 'min', params: { min: f.minimum } };
      if (typeof f.maximum === 'number' && v > f.maximum) return { rule: 'max', params: { max: f.maximum } };
      return undefined;
    }
    case 'boolean':
      return typeof v === 'boolean' ? undefined : { rule: 'not_boolean' };
    case 'array':
      return Array.isArray(v) && v.every((x) => typeof x === 'string') ? undefined : { rule: 'not_list' };
    default:
      return { rule: 'unknown' };
  }
}

/** The codes of `valueProblems`: `input_value_<rule>`, each with a message in every language. */
export const INPUT_VALUE_CODES = ['required', 'unknown', 'not_object', 'not_string', 'not_number', 'not_integer', 'not_boolean', 'not_list', 'enum', 'too_long', 'email', 'date', 'uri', 'min', 'max'].map((r) => `input_value_${r}`);

/**
 * Every field of `values` that does not satisfy `form` (a missing required field, a value of the
 * wrong type or outside its enum, format, length or range, a field the form does not have), each
 * with `field: "values.<name>"` and a code naming the rule (`input_value_required`,
 * `input_value_too_long` …, see `INPUT_VALUE_CODES`). An empty list when the values fit.
 */
export function valueProblems(form: Record<string, unknown>, values: unknown): Problem[] {
  const problems: Problem[] = [];
  const bad = (name: string, m: Misfit) => problems.push({ code: `input_value_${m.rule}`, field: `values.${name}`, params: { field: name, ...m.params } });
  if (!isObject(values)) {
    problems.push({ code: 'input_value_not_object', field: 'values', params: { field: 'values' } });
    return problems;
  }
  const props = (isObject(form.properties) ? form.properties : {}) as Record<string, Field>;
  const required = Array.isArray(form.required) ? (form.required as string[]) : [];
  for (const name of required) if (values[name] === undefined || values[name] === null) bad(name, { rule: 'required' });
  for (const [name, v] of Object.entries(values)) {
    const f = Object.hasOwn(props, name) ? props[name] : undefined;
    if (!f) {
      bad(name, { rule: 'unknown' });
      continue;
    }
    if (v === undefined || v === null) continue;
    const misfit = valueMisfit(f, v);
    if (misfit) bad(name, misfit);
  }
  return problems;
}
