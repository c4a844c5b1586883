import { type Comparison, type ComparisonOp, type ConditionCase, ELSE_PORT, type When } from './control-flow';
import { compilePattern } from './validate-flow';

/**
 * Condition evaluation, pure: the branch a structured condition takes, given a
 * function that resolves each side of a comparison, and the case a model's answer names.
 * No I/O, no clock; the runner resolves references and calls these.
 */

/** JSON equality: same type and value; arrays element by element, objects key by key (order ignored). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (a === null || b === null || typeof a !== 'object' || typeof b !== 'object') return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((v, i) => jsonEqual(v, bb[i]));
  }
  const ka = Object.keys(a as object);
  const kb = Object.keys(b as object);
  return ka.length === kb.length && ka.every((k) => Object.hasOwn(b as object, k) && jsonEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/** Empty: null, absent, `""`, `[]` or `{}`. */
function isEmpty(v: unknown): boolean {
  if (v === null || v === undefined || v === '') return true;
  if (Array.isArray(v)) return v.length === 0;
  return typeof v === 'object' && Object.keys(v as object).length === 0;
}

/** Ordering: numeric when both are numbers, code-point order when both are strings, otherwise no order. */
function order(a: unknown, b: unknown): number | undefined {
  if (typeof a === 'number' && typeof b === 'number') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return undefined;
}

/** The longest text a `matches` test reads (a bound on the work one comparison may do). */
export const MAX_MATCH_INPUT = 100_000;

/**
 * Whether `left op right` holds. Values are already resolved (`undefined`: absent). An
 * unordered pair is false for `gt`/`gte`/`lt`/`lte`; a non-string side is false for the string
 * operators; a `matches` pattern that does not compile is false (validation refuses a literal one).
 */
export function compare(left: unknown, op: ComparisonOp, right: unknown): boolean {
  switch (op) {
    case 'eq':
      return jsonEqual(left, right);
    case 'ne':
      return !jsonEqual(left, right);
    case 'gt':
    case 'gte':
    case 'lt':
    case 'lte': {
      const o = order(left, right);
      if (o === undefined) return false;
      return op === 'gt' ? o > 0 : op === 'gte' ? o >= 0 : op === 'lt' ? o < 0 : o <= 0;
    }
    case 'contains':
      if (typeof left === 'string') return typeof right === 'string' && left.includes(right);
      return Array.isArray(left) && left.some((v) => jsonEqual(v, right));
    case 'startsWith':
      return typeof left === 'string' && typeof right === 'string' && left.startsWith(right);
    case 'endsWith':
      return typeof left === 'string' && typeof right === 'string' && left.endsWith(right);
    case 'in':
      return Array.isArray(right) && right.some((v) => jsonEqual(v, left));
    case 'matches': {
      if (typeof left !== 'string' || typeof right !== 'string') return false;
      const compiled = compilePattern(right);
      return compiled.ok && compiled.regex.test(left.slice(0, MAX_MATCH_INPUT));
    }
    case 'exists':
      return left !== null && left !== undefined;
    case 'empty':
      return isEmpty(left);
  }
}

/** Resolves one side of a comparison (a literal, a reference or text with references); `undefined` when it points at nothing. */
export type SideResolver = (side: unknown) => unknown;

/** Whether a `when` holds: every comparison (`all`) or one of them (`any`). */
export function whenHolds(when: When, resolve: SideResolver): boolean {
  const test = (c: Comparison) => compare(resolve(c.left), c.op as ComparisonOp, c.right === undefined ? undefined : resolve(c.right));
  if (when.all) return when.all.every(test);
  return (when.any ?? []).some(test);
}

/** The branch a structured condition takes: the first case whose `when` holds, else `else`. */
export function pickBranch(cases: readonly ConditionCase[], resolve: SideResolver): string {
  for (const c of cases) if (c.when && whenHolds(c.when, resolve)) return c.name;
  return ELSE_PORT;
}

/**
 * The case a model's answer names: `{"case": "<name>"}` (possibly in a code fence or with text
 * around it), or just a case name (or `else`), quotes and a final period allowed. Undefined
 * when it names none (`condition_model_invalid`).
 */
export function caseFromAnswer(answer: string, names: readonly string[]): string | undefined {
  const known = new Set([...names, ELSE_PORT]);
  const text = answer.trim();
  const json = /\{[^{}]*\}/.exec(text)?.[0];
  if (json) {
    try {
      const picked = (JSON.parse(json) as { case?: unknown }).case;
      if (typeof picked === 'string' && known.has(picked.trim())) return picked.trim();
    } catch {
      // not JSON: read it as a bare name below
    }
  }
  const bare = text.replace(/^[`"'\s]+|[`"'.\s]+$/g, '');
  return known.has(bare) ? bare : undefined;
}
