import {
  CASE_NAME_PATTERN,
  type Comparison,
  COMPARISON_OPS,
  type ComparisonOp,
  FOREACH_MAX_BODY,
  FOREACH_MAX_CONCURRENCY,
  FOREACH_MAX_ITEMS,
  MAX_CASES,
  MAX_COMPARISONS,
  MAX_REGEX_LENGTH,
  RESERVED_PORTS,
  type StepKind,
  stepKind,
  UNARY_OPS,
} from './control-flow';
import type { Problem } from './errors';
import { formProblems, INPUT_ON_TIMEOUT, INPUT_TIMEOUT_MAX_MS, INPUT_TIMEOUT_MIN_MS, valueProblems } from './input-form';
import type { PlanStep } from './plan';
import { exactReference, type PathPart, scanString } from './references';

/**
 * The control-flow rules of one step, as coded problems: which fields its kind takes,
 * a condition's cases and comparisons, a forEach's list, limits and body. Pure; called by
 * `validatePlan` for every step whose shape is sound.
 */

type StepField = keyof PlanStep;

/**
 * Fields each kind needs and fields it cannot have. Tool and model steps keep what they always
 * accepted (a model step's missing instruction has its own code, `step_missing_instruction`).
 * The input-only fields belong to no other kind.
 */
const INPUT_ONLY: StepField[] = ['form', 'onTimeout', 'defaults'];
const KIND_FIELDS: Record<StepKind, { required: StepField[]; forbidden: StepField[] }> = {
  tool: { required: ['tool'], forbidden: ['cases', 'items', 'concurrency', 'maxItems', 'steps', ...INPUT_ONLY] },
  model: { required: [], forbidden: ['tool', 'cases', 'items', 'concurrency', 'maxItems', 'steps', ...INPUT_ONLY] },
  condition: { required: ['cases'], forbidden: ['tool', 'arguments', 'retry', 'items', 'concurrency', 'maxItems', 'steps', ...INPUT_ONLY] },
  forEach: { required: ['items', 'steps'], forbidden: ['tool', 'arguments', 'instruction', 'cases', 'retry', 'pinned', 'timeoutMs', ...INPUT_ONLY] },
  // a person answers it: nothing to call, retry or approve
  input: { required: ['form'], forbidden: ['tool', 'arguments', 'instruction', 'cases', 'items', 'concurrency', 'maxItems', 'steps', 'retry', 'requiresApproval'] },
};

/** A regex written as `/source/flags` keeps its flags; any other string is the source itself. */
export function regexParts(pattern: string): { source: string; flags: string } {
  const m = /^\/([\s\S]*)\/([dgimsuyv]*)$/.exec(pattern);
  return m ? { source: m[1] as string, flags: m[2] as string } : { source: pattern, flags: '' };
}

/**
 * Compiles a `matches` pattern, or returns why it cannot be: longer than `MAX_REGEX_LENGTH`
 * characters (`too_long`) or not a JavaScript regular expression (the engine's message).
 */
export function compilePattern(pattern: string): { ok: true; regex: RegExp } | { ok: false; reason: string; tooLong?: boolean } {
  if (pattern.length > MAX_REGEX_LENGTH) return { ok: false, reason: 'too_long', tooLong: true };
  const { source, flags } = regexParts(pattern);
  try {
    return { ok: true, regex: new RegExp(source, flags.replace(/[gy]/g, '')) };
  } catch (e) {
    return { ok: false, reason: (e as Error).message };
  }
}

/** True for a string that has at least one placeholder: its value is only known at run time. */
function isDynamic(value: unknown): boolean {
  return typeof value === 'string' && scanString(value).length > 0;
}

/** Problems of one comparison at `at` (`cases[0].when.all[1]`). */
function comparisonProblems(cmp: Comparison, at: string, p: (code: string, params: Record<string, unknown>, field: string) => void): void {
  if (!Object.hasOwn(cmp, 'left')) p('condition_left_missing', {}, `${at}.left`);
  if (!(COMPARISON_OPS as readonly string[]).includes(cmp.op)) {
    p('condition_operator_unknown', { op: cmp.op, ops: COMPARISON_OPS.join(', ') }, `${at}.op`);
    return;
  }
  const op = cmp.op as ComparisonOp;
  if (UNARY_OPS.includes(op)) return;
  if (!Object.hasOwn(cmp, 'right') || cmp.right === undefined) {
    p('condition_right_missing', { op }, `${at}.right`);
    return;
  }
  const right = cmp.right;
  if (op === 'in' && !Array.isArray(right) && !(typeof right === 'string' && exactReference(right))) p('condition_in_not_array', {}, `${at}.right`);
  if (op === 'matches') {
    if (typeof right !== 'string') p('condition_regex_invalid', { reason: 'not a string' }, `${at}.right`);
    else if (!isDynamic(right)) {
      const compiled = compilePattern(right);
      if (!compiled.ok && compiled.tooLong) p('condition_regex_too_long', { max: MAX_REGEX_LENGTH }, `${at}.right`);
      else if (!compiled.ok) p('condition_regex_invalid', { reason: compiled.reason }, `${at}.right`);
    }
  }
}

/** Problems of a condition's cases: count, names, and for each case its `when` or its `description`. */
function conditionProblems(step: PlanStep, p: (code: string, params: Record<string, unknown>, field: string) => void): void {
  const cases = step.cases ?? [];
  if (!step.cases) return;
  if (cases.length < 1 || cases.length > MAX_CASES) p('condition_cases_count', { count: cases.length, max: MAX_CASES }, 'cases');
  const byModel = Boolean(step.instruction?.trim());
  const seen = new Set<string>();
  cases.forEach((c, i) => {
    const at = `cases[${i}]`;
    if (RESERVED_PORTS.includes(c.name)) p('condition_case_name_reserved', { name: c.name }, `${at}.name`);
    else if (!CASE_NAME_PATTERN.test(c.name)) p('condition_case_name_invalid', { name: c.name }, `${at}.name`);
    else if (seen.has(c.name)) p('condition_case_duplicate', { name: c.name }, `${at}.name`);
    seen.add(c.name);
    if (byModel) {
      if (!c.description?.trim()) p('condition_case_description_required', { name: c.name }, `${at}.description`);
      if (c.when) p('step_field_not_allowed', { kind: 'condition (model)', field: `${at}.when` }, `${at}.when`);
      return;
    }
    if (!c.when) {
      p('condition_case_when_required', { name: c.name }, `${at}.when`);
      return;
    }
    const keys = (['all', 'any'] as const).filter((k) => c.when?.[k] !== undefined);
    const list = keys.length === 1 ? (c.when[keys[0] as 'all' | 'any'] ?? []) : [];
    if (keys.length !== 1 || list.length < 1 || list.length > MAX_COMPARISONS) {
      p('condition_when_invalid', { name: c.name, max: MAX_COMPARISONS }, `${at}.when`);
      return;
    }
    list.forEach((cmp, j) => comparisonProblems(cmp, `${at}.when.${keys[0]}[${j}]`, p));
  });
}

/** Problems of a forEach's own fields: its list, concurrency, maxItems and body size; `foreach_nested` inside a body. */
function forEachProblems(step: PlanStep, inBody: boolean, p: (code: string, params: Record<string, unknown>, field: string) => void): void {
  if (inBody) p('foreach_nested', {}, 'kind');
  const items = step.items;
  if (items !== undefined && !Array.isArray(items) && !(typeof items === 'string' && exactReference(items))) p('foreach_items_not_array', {}, 'items');
  const c = step.concurrency;
  if (c !== undefined && (c < 1 || c > FOREACH_MAX_CONCURRENCY)) p('foreach_concurrency_range', { max: FOREACH_MAX_CONCURRENCY }, 'concurrency');
  const m = step.maxItems;
  if (m !== undefined && (m < 1 || m > FOREACH_MAX_ITEMS)) p('foreach_max_items_range', { max: FOREACH_MAX_ITEMS }, 'maxItems');
  const body = step.steps;
  if (body && (body.length < 1 || body.length > FOREACH_MAX_BODY)) p('foreach_body_size', { count: body.length, max: FOREACH_MAX_BODY }, 'steps');
}

/**
 * Problems of an input step's own fields: its form (`input_form_invalid` at `form…`), its wait
 * (`input_timeout_range`), `onTimeout` (`input_on_timeout_invalid`), and, with
 * `onTimeout: "default"`, its `defaults` (`input_defaults_required`, or `input_defaults_invalid`
 * per field that does not fit the form). An input step inside a forEach body is refused
 * (`input_in_foreach`): a loop's iterations would each stop the run for a person.
 */
function inputProblems(step: PlanStep, inBody: boolean, p: (code: string, params: Record<string, unknown>, field: string) => void): void {
  if (inBody) p('input_in_foreach', {}, 'kind');
  const form = step.form;
  const formBad = form !== undefined ? formProblems(form, step.id) : [];
  for (const f of formBad) p(f.code, f.params ?? {}, f.field ?? 'form');
  const t = step.timeoutMs;
  if (t !== undefined && (t < INPUT_TIMEOUT_MIN_MS || t > INPUT_TIMEOUT_MAX_MS)) p('input_timeout_range', { timeoutMs: t, min: INPUT_TIMEOUT_MIN_MS, max: INPUT_TIMEOUT_MAX_MS }, 'timeoutMs');
  const on = step.onTimeout;
  if (on !== undefined && !(INPUT_ON_TIMEOUT as readonly string[]).includes(on)) p('input_on_timeout_invalid', { value: on }, 'onTimeout');
  if (on !== 'default' || form === undefined || formBad.length) return;
  if (step.defaults === undefined) return p('input_defaults_required', {}, 'defaults');
  for (const v of valueProblems(form, step.defaults)) p('input_defaults_invalid', { field: v.params?.field }, `defaults.${String(v.params?.field)}`);
}

/**
 * Every control-flow problem of one step: fields its kind needs or cannot have
 * (`step_field_required`, `step_field_not_allowed`), then the condition or forEach rules.
 * `inBody` is true for a step inside a forEach's body.
 */
export function flowProblems(step: PlanStep, inBody: boolean): Problem[] {
  const problems: Problem[] = [];
  const p = (code: string, params: Record<string, unknown>, field: string) => problems.push({ code, stepId: step.id, field, params: { stepId: step.id, ...params } });
  const kind = stepKind(step);
  const rule = KIND_FIELDS[kind];
  for (const field of rule.required) if (step[field] === undefined) p('step_field_required', { kind, field }, field);
  for (const field of rule.forbidden) if (step[field] !== undefined) p('step_field_not_allowed', { kind, field }, field);
  if (kind === 'condition') conditionProblems(step, p);
  if (kind === 'forEach') forEachProblems(step, inBody, p);
  if (kind === 'input') inputProblems(step, inBody, p);
  return problems;
}

/** Where the strings of a step that may hold references are, besides `arguments` and `instruction`: comparison sides and a forEach's `items`. */
export function flowReferenceSites(step: PlanStep): { value: unknown; at: PathPart[] }[] {
  const sites: { value: unknown; at: PathPart[] }[] = [];
  (step.cases ?? []).forEach((c, i) => {
    for (const key of ['all', 'any'] as const) {
      (c.when?.[key] ?? []).forEach((cmp, j) => {
        sites.push({ value: cmp.left, at: ['cases', i, 'when', key, j, 'left'] });
        if (cmp.right !== undefined) sites.push({ value: cmp.right, at: ['cases', i, 'when', key, j, 'right'] });
      });
    }
  });
  if (step.items !== undefined) sites.push({ value: step.items, at: ['items'] });
  return sites;
}
