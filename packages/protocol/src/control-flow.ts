import { z } from 'zod';

/**
 * Control flow in plans: step kinds, condition cases and their comparisons, ports in
 * `dependsOn`, joins and forEach limits. The schemas check shape only; the rules (counts,
 * names, operators, regexes, ports) are coded problems of `validatePlan`, so a bad operator is
 * reported as `condition_operator_unknown` naming the step and field, not as a schema issue.
 */

/**
 * What a step does: `tool` (calls a catalog tool; the default when `tool` is set), `model` (the
 * model carries out `instruction`; the default without `tool`), `condition` (picks a branch),
 * `forEach` (runs its body once per item), `input` (pauses the run until a person answers its form;
 * docs/workflows.md).
 */
export const STEP_KINDS = ['tool', 'model', 'condition', 'forEach', 'input'] as const;
/** One of `STEP_KINDS`. */
export type StepKind = (typeof STEP_KINDS)[number];

/** A condition case name: a lower-case letter, then up to 31 lower-case letters, digits or `_`. */
export const CASE_NAME_PATTERN = /^[a-z][a-z0-9_]{0,31}$/;
/** Port names no case may take: `else` (no case held) and `error` (failure handling's failure port). */
export const RESERVED_PORTS: readonly string[] = ['else', 'error'];
/** The port taken when no case of a condition holds. */
export const ELSE_PORT = 'else';
/** The ports of a step with `onError: "branch"`: `ok` when it succeeded, `error` when it failed. */
export const OK_PORT = 'ok';
/** The port of a step with `onError: "branch"` taken when it failed. */
export const ERROR_PORT = 'error';
/** Cases per condition: 1..20. */
export const MAX_CASES = 20;
/** Comparisons per `when`: 1..20. */
export const MAX_COMPARISONS = 20;
/** The longest `matches` pattern, in characters. */
export const MAX_REGEX_LENGTH = 200;

/**
 * Comparison operators. `eq`/`ne`: JSON equality. `gt`/`gte`/`lt`/`lte`: numeric when both
 * sides are numbers, code-point order when both are strings, otherwise false. `contains`:
 * substring, or an array element by JSON equality. `startsWith`/`endsWith`: strings. `in`:
 * `right` is an array holding `left`. `matches`: `right` is a regular expression. `exists`: not
 * null/absent. `empty`: null, absent, `""`, `[]` or `{}`. The last two take no `right`.
 */
export const COMPARISON_OPS = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'contains', 'startsWith', 'endsWith', 'in', 'matches', 'exists', 'empty'] as const;
/** One of `COMPARISON_OPS`. */
export type ComparisonOp = (typeof COMPARISON_OPS)[number];
/** Operators that read only `left`. */
export const UNARY_OPS: readonly ComparisonOp[] = ['exists', 'empty'];

/** forEach limits: concurrency 1..8 (default 1), maxItems 1..10000 (default 1000), body 1..32 steps. */
export const FOREACH_MAX_CONCURRENCY = 8;
/** The most items a forEach accepts when it sets no `maxItems`. */
export const FOREACH_DEFAULT_MAX_ITEMS = 1000;
/** The highest `maxItems` a forEach may set. */
export const FOREACH_MAX_ITEMS = 10_000;
/** The most steps a forEach body may hold. */
export const FOREACH_MAX_BODY = 32;
/** The most step executions one run may make, iterations included (`run_too_many_executions`). */
export const MAX_RUN_EXECUTIONS = 10_000;

/**
 * One comparison: `left` and `right` are JSON literals, strings that are exactly one reference
 * (typed), or text with references (a string). `op` is checked by validation
 * (`condition_operator_unknown`), `right` too (`condition_right_missing`).
 */
export const ComparisonSchema = z
  .object({
    /** The value compared; absent reads as absent (so `exists` is false). */
    left: z.unknown().optional(),
    /** One of `COMPARISON_OPS`. */
    op: z.string().max(32),
    /** The value compared with; required except for `exists` and `empty`. */
    right: z.unknown().optional(),
  })
  .strict();

/** `{"all": [Cmp…]}` (every comparison holds) or `{"any": [Cmp…]}` (one does); exactly one key, 1..20 comparisons. */
export const WhenSchema = z
  .object({
    /** Holds when every comparison holds. */
    all: z.array(ComparisonSchema).optional(),
    /** Holds when at least one comparison holds. */
    any: z.array(ComparisonSchema).optional(),
  })
  .strict();

/**
 * One case of a condition. A structured condition gives every case a `when`; a model
 * condition (the step has `instruction`) gives every case a `description` the model reads.
 */
export const CaseSchema = z
  .object({
    /** The case (and port) name: `CASE_NAME_PATTERN`, unique in the step, never `else` or `error`. */
    name: z.string().max(64),
    /** When the case holds (structured conditions). */
    when: WhenSchema.optional(),
    /** What the case means, for the model (model conditions); at most 2000 characters. */
    description: z.string().max(2000).optional(),
  })
  .strict();

/** One comparison (see `ComparisonSchema`). */
export type Comparison = z.infer<typeof ComparisonSchema>;
/** A case's condition (see `WhenSchema`). */
export type When = z.infer<typeof WhenSchema>;
/** One condition case (see `CaseSchema`). */
export type ConditionCase = z.infer<typeof CaseSchema>;

/** `all` (the default): every dependency satisfied; `any`: at least one, once all are settled. */
export const JOIN_MODES = ['all', 'any'] as const;
/** One of `JOIN_MODES`. */
export type JoinMode = (typeof JOIN_MODES)[number];

/** A `dependsOn` entry split into the step it names and the port, if any (`check:big`). */
export interface Dependency {
  /** The step id. */
  stepId: string;
  /** The port (`big`, `else`, `ok`, `error`), or undefined for a plain dependency. */
  port?: string;
}

/** Splits `"check:big"` into `{stepId: "check", port: "big"}`; `"a"` into `{stepId: "a"}`. Step ids hold no `:`. */
export function parseDependency(entry: string): Dependency {
  const at = entry.indexOf(':');
  return at < 0 ? { stepId: entry } : { stepId: entry.slice(0, at), port: entry.slice(at + 1) };
}

/** The step id a `dependsOn` entry names (the port dropped). */
export function dependencyStep(entry: string): string {
  return parseDependency(entry).stepId;
}

/** What kind detection and port listing need of a step. */
export interface KindedStep {
  /** The step's `kind`; absent for a tool or model step. */
  kind?: string;
  /** The tool it calls; absent for a model step. */
  tool?: string;
  /** A condition's cases (their names are its ports). */
  cases?: readonly {
    /** The case's name. */
    name: string;
  }[];
  /** The step's `onError` (`branch` gives it the `ok` and `error` ports). */
  onError?: string;
}

/** The step's kind: `kind` when set, else `tool` when a tool is named, else `model`. */
export function stepKind(step: KindedStep): StepKind {
  if (step.kind) return step.kind as StepKind;
  return step.tool ? 'tool' : 'model';
}

/**
 * The ports a step offers to `dependsOn`: a condition's case names plus `else`; a step with
 * `onError: "branch"` also `error` (taken when it failed) and, unless it is a condition (whose
 * branches are its success), `ok`. A plain dependency on the step needs no port.
 */
export function stepPorts(step: KindedStep): string[] {
  const branch = step.onError === 'branch';
  if (stepKind(step) === 'condition') return [...(step.cases ?? []).map((c) => c.name), ELSE_PORT, ...(branch ? [ERROR_PORT] : [])];
  return branch ? [OK_PORT, ERROR_PORT] : [];
}
