import { type Comparison, type ConditionCase, exactReference, UNARY_OPS, type When } from '@fengyu/protocol';

/**
 * The condition editor's pure part: how an operand typed in a text box becomes a JSON value, the
 * parts of a `when`, and fresh cases and comparisons. A comparison's side is a JSON literal or a
 * string (a reference keeps the referenced value's type): text that parses as JSON other than a
 * string (`1000`, `true`, `null`, `["a"]`) is that literal, `"1000"` in quotes is the text 1000,
 * anything else (and anything holding `{{`) is text.
 */

/** The JSON value an operand's text stands for (see the rule above). */
export function parseOperand(text: string): unknown {
  const trimmed = text.trim();
  if (trimmed === '') return text;
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    return text;
  }
}

/** The text an operand is edited as: the inverse of `parseOperand` (a string that would read as a literal is quoted). */
export function showOperand(value: unknown): string {
  if (value === undefined) return '';
  if (typeof value !== 'string') return JSON.stringify(value);
  return parseOperand(value) === value ? value : JSON.stringify(value);
}

/** True when the operator reads only `left` (`exists`, `empty`): the editor hides `right`. */
export function isUnary(op: string): boolean {
  return (UNARY_OPS as readonly string[]).includes(op);
}

/** A `when`'s mode and comparisons (an empty `all` when it has neither). */
export function whenParts(when: When | undefined): { mode: 'all' | 'any'; list: Comparison[] } {
  if (when?.any) return { mode: 'any', list: when.any };
  return { mode: 'all', list: when?.all ?? [] };
}

/** A `when` from its mode and comparisons. */
export function makeWhen(mode: 'all' | 'any', list: Comparison[]): When {
  return mode === 'any' ? { any: list } : { all: list };
}

/** A comparison with operator `op`: `right` dropped for a unary operator, kept (or `''`) otherwise. */
export function withOp(c: Comparison, op: string): Comparison {
  if (isUnary(op)) return { left: c.left, op };
  return { left: c.left, op, right: c.right ?? '' };
}

/** The first unused case name `case_2`, `case_3`, … */
export function nextCaseName(cases: readonly ConditionCase[]): string {
  const taken = new Set(cases.map((c) => c.name));
  for (let i = cases.length + 1; ; i++) if (!taken.has(`case_${i}`)) return `case_${i}`;
}

/** A new case: a structured one compares nothing yet (`'' eq ''`); a model condition's has an empty description. */
export function newCase(cases: readonly ConditionCase[], model: boolean): ConditionCase {
  const name = nextCaseName(cases);
  return model ? { name, description: '' } : { name, when: { all: [{ left: '', op: 'eq', right: '' }] } };
}

/** The step an operand references, when it is exactly one node reference (its edge is added). */
export function operandNode(value: unknown): string | undefined {
  const ref = typeof value === 'string' ? exactReference(value) : undefined;
  return ref?.kind === 'node' ? ref.id : undefined;
}
