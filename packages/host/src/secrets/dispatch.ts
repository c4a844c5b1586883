import { type PlanStep, type ResolveScope, redactText, redactValue, type SecretValue, secretNamesIn } from '@fengyu/protocol';
import type { SecretsView } from './vault';

/**
 * Secrets at dispatch (docs/secrets.md), for every path that calls a tool for a step. Arguments are
 * resolved with `{{secrets.NAME}}` left as written (that is what events, gates, hooks and rules
 * see); right before the call the step's argument template is resolved once more with the
 * values. Only placeholders written in the template are substituted: a `{{secrets.…}}` text that
 * arrives inside another step's result or an input is data and stays as it is.
 */

const usesSecrets = new WeakMap<PlanStep, boolean>();

function stepUsesSecrets(step: PlanStep): boolean {
  let uses = usesSecrets.get(step);
  if (uses === undefined) {
    uses = secretNamesIn(step.arguments ?? {}).length > 0;
    usesSecrets.set(step, uses);
  }
  return uses;
}

/**
 * The arguments to hand to the tool: `shown` itself, or the template resolved again by `resolve`
 * (the same resolution that made `shown`: a shell command's values quoted alike) with the values.
 */
export function dispatchArguments<T>(step: PlanStep, shown: T, scope: ResolveScope, secrets: SecretsView | undefined, resolve: (scope: ResolveScope) => T, secretInputs?: Record<string, unknown>): T {
  const named = !!secrets && stepUsesSecrets(step);
  if (!step.tool || (!named && !secretInputs)) return shown;
  // a secret input (`format: "password"`) is the marker in `scope`, its value only here
  return resolve({ ...scope, ...(secretInputs ? { inputs: { ...scope.inputs, ...secretInputs } } : {}), ...(named && secrets ? { secret: (name: string) => secrets.value(name) } : {}) });
}

/** A call's outcome: its result, or its error and what a failed call still returned (`kept`). */
type Outcome = { ok: true; result: unknown; json?: string } | { ok: false; error: string; kept?: unknown };

/** The outcome with every secret value (4+ characters) in its result, error or kept result replaced by `[redacted:NAME]`. */
export function redactOutcome<O extends Outcome>(outcome: O, list: readonly SecretValue[]): O {
  if (list.length === 0) return outcome;
  if (!outcome.ok) return { ...outcome, error: redactText(outcome.error, list), ...(outcome.kept !== undefined ? { kept: redactValue(outcome.kept, list) } : {}) };
  const result = redactValue(outcome.result, list);
  // a changed result loses the JSON text it was parsed from: it is made again from the value
  return result === outcome.result ? outcome : ({ ok: true, result, json: undefined } as O);
}
