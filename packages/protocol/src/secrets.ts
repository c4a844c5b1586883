import { type JsonSchema, REDACTED, sealSecretLiterals, secretFields } from './catalog';
import type { Problem } from './errors';
import type { AgentPlan, PlanStep } from './plan';
import { collectReferences, formatPath } from './references';

/**
 * Secrets as the contract sees them (docs/secrets.md): names, where a `{{secrets.NAME}}` may stand, and
 * the one redaction of secret values in anything shown or stored. Pure: the host passes the
 * names and values it holds as data.
 */

/** A secret's name: a letter or `_`, then letters, digits or `_`; 64 characters at most. */
export const SECRET_NAME_RE = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
/** A secret's value: a string of 1..65536 characters. */
export const MAX_SECRET_VALUE_CHARS = 65536;
/** Values shorter than this are never searched for in results (too many false hits). */
export const MIN_REDACTED_VALUE_CHARS = 4;

/** A secret as the vault lists it: never its value. */
export interface SecretView {
  /** The secret's name (`SECRET_NAME_RE`), as `{{secrets.NAME}}` references it. */
  name: string;
  /** When it was first stored (ISO-8601 UTC). */
  createdAt: string;
  /** When its value was last replaced (ISO-8601 UTC). */
  updatedAt: string;
}

/** `{{secrets.NAME}}`: how a reference to a secret is written (and shown in place of its value). */
export function secretPlaceholder(name: string): string {
  return `{{secrets.${name}}}`;
}

/** The names of every `{{secrets.NAME}}` inside a JSON value, each once, in walk order. */
export function secretNamesIn(value: unknown): string[] {
  const names = new Set<string>();
  for (const { token } of collectReferences(value)) if (token.ok && token.ref.kind === 'secrets') names.add(token.ref.name);
  return [...names];
}

/**
 * A workflow's secret inputs: the top-level inputs its schema declares `format: "password"`,
 * `writeOnly` or `x-fengyu-secret` (the same test as a tool's secret arguments). Their values are
 * write-only: a run's row, goal, events and detail show the marker, the vault keeps the value.
 */
export function secretInputNames(inputSchema: JsonSchema | undefined): string[] {
  return secretFields(inputSchema);
}

/** `inputs` with each named secret input holding a string replaced by the marker; the same object when none does. */
export function sealInputs(inputs: Record<string, unknown>, names: readonly string[]): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const n of names) {
    if (typeof inputs[n] !== 'string' || inputs[n] === REDACTED) continue;
    out ??= { ...inputs };
    out[n] = REDACTED;
  }
  return out ?? inputs;
}

/** The names of the inputs a value reads (`{{inputs.NAME…}}`), each once. */
export function inputNamesIn(value: unknown): string[] {
  const names = new Set<string>();
  for (const { token } of collectReferences(value)) if (token.ok && token.ref.kind === 'inputs') names.add(token.ref.name);
  return [...names];
}

type RawStep = Record<string, unknown>;

function stepsOf(plan: unknown): RawStep[] {
  const steps = (plan as { steps?: unknown } | null | undefined)?.steps;
  return Array.isArray(steps) ? steps.filter((s): s is RawStep => !!s && typeof s === 'object' && !Array.isArray(s)) : [];
}

/** A tool step: one with a `tool` (and no other kind than `tool`). Only its `arguments` may hold secrets. */
function isToolStep(step: RawStep): boolean {
  return typeof step.tool === 'string' && (step.kind === undefined || step.kind === 'tool');
}

/**
 * Every secret name a plan's tool steps use (forEach bodies included), each once: what a
 * workflow needs from the vault, what "used by" and an export list.
 */
export function planSecretNames(plan: unknown): string[] {
  const names = new Set<string>();
  const walk = (steps: RawStep[]) => {
    for (const s of steps) {
      if (isToolStep(s)) for (const n of secretNamesIn(s.arguments ?? {})) names.add(n);
      walk(stepsOf(s));
    }
  };
  walk(stepsOf(plan));
  return [...names];
}

/**
 * Where secrets may not stand, and which names are unknown. A `{{secrets.NAME}}` is allowed
 * only in a tool step's `arguments`; anywhere else in a step (an instruction, a condition, a
 * forEach's `items`, an input form, a title) or in the plan's goal it is
 * `secret_not_allowed_here`. A step's `pinned` result is data and is not read. With `known`
 * (the caller's secret names), a name outside it is `secret_unknown`; without it names are not
 * checked (a draft being edited before the names are loaded).
 */
export function secretProblems(plan: unknown, known?: ReadonlySet<string>): Problem[] {
  const problems: Problem[] = [];
  const goal = (plan as { goal?: unknown } | null | undefined)?.goal;
  for (const name of secretNamesIn(goal ?? '')) problems.push({ code: 'secret_not_allowed_here', field: 'goal', params: { name, field: 'goal' } });
  const walk = (steps: RawStep[]) => {
    for (const step of steps) {
      const stepId = typeof step.id === 'string' ? step.id : undefined;
      for (const [key, value] of Object.entries(step)) {
        if (key === 'pinned' || key === 'steps') continue;
        for (const { token, at } of collectReferences(value, [key])) {
          if (!token.ok || token.ref.kind !== 'secrets') continue;
          const name = token.ref.name;
          const field = formatPath(at).slice(1);
          if (key !== 'arguments' || !isToolStep(step)) problems.push({ code: 'secret_not_allowed_here', stepId, field, params: { name, field, stepId: stepId ?? '' } });
          else if (known && !known.has(name)) problems.push({ code: 'secret_unknown', stepId, field, params: { name, stepId: stepId ?? '' } });
        }
      }
      walk(stepsOf(step));
    }
  };
  walk(stepsOf(plan));
  return problems;
}

/** A secret value to hide, with the name shown in its place (`[redacted:NAME]`). */
export interface SecretValue {
  /** The secret's name, shown in the value's place. */
  name: string;
  /** The plain value to search for (values under `MIN_REDACTED_VALUE_CHARS` are not searched). */
  value: string;
}

/** The values worth searching for, longest first (a value inside a longer one is found after it). */
export function redactionList(secrets: readonly SecretValue[]): SecretValue[] {
  return secrets.filter((s) => s.value.length >= MIN_REDACTED_VALUE_CHARS).sort((a, b) => b.value.length - a.value.length);
}

/** `text` with every exact occurrence of a listed value replaced by `[redacted:NAME]`. */
export function redactText(text: string, list: readonly SecretValue[]): string {
  let out = text;
  for (const s of list) if (out.includes(s.value)) out = out.split(s.value).join(`[redacted:${s.name}]`);
  return out;
}

/**
 * A JSON value with every occurrence of a listed value, in any string or object key, replaced
 * by `[redacted:NAME]`. The same value (by identity) is returned when nothing matched, so a
 * caller can tell and keep its JSON text. `list` comes from `redactionList`.
 */
export function redactValue<T>(value: T, list: readonly SecretValue[]): T {
  if (list.length === 0) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return redactText(v, list);
    if (Array.isArray(v)) {
      const mapped = v.map(walk);
      return mapped.some((m, i) => m !== v[i]) ? mapped : v;
    }
    if (v && typeof v === 'object') {
      let changed = false;
      const out: Record<string, unknown> = {};
      for (const [k, x] of Object.entries(v)) {
        const key = redactText(k, list);
        const y = walk(x);
        if (key !== k || y !== x) changed = true;
        out[key] = y;
      }
      return changed ? out : v;
    }
    return v;
  };
  return walk(value) as T;
}

/**
 * A plan as it may be stored (a workflow's definition, a run's row): each write-only argument
 * holding a value typed in becomes the marker (`sealSecretLiterals`), in every step, loop bodies
 * included; whole references stay. The same plan object when nothing changes.
 */
export function sealPlanSecretLiterals(plan: AgentPlan, schemaOf: (tool: string) => JsonSchema | undefined): AgentPlan {
  const steps = sealSteps(plan.steps, schemaOf);
  return steps === plan.steps ? plan : { ...plan, steps };
}

function sealSteps(steps: PlanStep[], schemaOf: (tool: string) => JsonSchema | undefined): PlanStep[] {
  const out = steps.map((step) => {
    let next = step;
    if (step.tool && step.arguments) {
      const args = sealSecretLiterals(step.arguments, schemaOf(step.tool));
      if (args !== step.arguments) next = { ...next, arguments: args };
    }
    if (Array.isArray(step.steps)) {
      const body = sealSteps(step.steps, schemaOf);
      if (body !== step.steps) next = { ...next, steps: body };
    }
    return next;
  });
  return out.every((s, i) => s === steps[i]) ? steps : out;
}
