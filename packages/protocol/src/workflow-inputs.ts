import type { JsonSchema } from './catalog';
import type { Problem } from './errors';
import { getPath, parseReference } from './references';
import { schemaChecker } from './schema-check';
import { inputContract } from './workflow';

/** Binding a run's inputs to a workflow's input contract, and filling them into its goal. */

/** The bound inputs (defaults applied, file inputs removed), or every problem found. */
export type InputCheck =
  | {
      /** The inputs match the contract. */
      ok: true;
      /** The bound inputs: defaults applied, file inputs removed. */
      inputs: Record<string, unknown>;
    }
  | {
      /** The inputs are refused. */
      ok: false;
      /** Every problem found, each naming its field. */
      problems: Problem[];
    };

/**
 * Binds run-time inputs to the contract: applies top-level defaults, then checks required fields
 * and JSON Schema types (ajv), naming every missing or wrong field. File and shared-directory
 * inputs are not values: a required file input must come with a `files` entry of its name.
 * `inputs` must be an object or absent (`inputs_not_object`); defaults are deep-copied; a
 * missing required value is `input_missing`, any other mismatch `input_invalid` with the path
 * and reason. Extra inputs not in the schema are kept unless the schema forbids them.
 */
export function checkInputs(schema: JsonSchema | undefined, inputs: unknown, fileNames: readonly string[] = []): InputCheck {
  return inputChecker(schema)(inputs, fileNames);
}

/** `checkInputs` against one schema, with the schema's contract and validator made once. */
export type InputChecker = (inputs: unknown, fileNames?: readonly string[]) => InputCheck;

/**
 * The check of `checkInputs` for one input schema, prepared once (its contract split and its
 * validator compiled) for a schema that does not change, such as a published version's: the
 * schema is read when the checker is made, so a changed schema needs a new checker.
 */
export function inputChecker(schema: JsonSchema | undefined): InputChecker {
  const c = inputContract(schema);
  const valueSchema = { ...(schema ?? {}), properties: Object.fromEntries(c.values.map((n) => [n, c.properties[n]])), required: c.required.filter((r) => c.values.includes(r)) };
  const check = schemaChecker(valueSchema);
  const defaults = c.values.flatMap((name) => {
    const d = c.properties[name]?.default;
    return d === undefined ? [] : [[name, d] as const];
  });
  return (inputs, fileNames = []) => {
    if (inputs !== undefined && (inputs === null || typeof inputs !== 'object' || Array.isArray(inputs))) {
      return { ok: false, problems: [{ code: 'inputs_not_object', field: 'inputs', params: {} }] };
    }
    const bound: Record<string, unknown> = { ...((inputs as Record<string, unknown>) ?? {}) };
    for (const [name, d] of defaults) if (bound[name] === undefined) bound[name] = structuredClone(d);
    const problems: Problem[] = [];
    for (const name of c.files) {
      if (c.required.includes(name) && !fileNames.includes(name)) problems.push({ code: 'input_missing', field: name, params: { input: name } });
      delete bound[name];
    }
    for (const name of c.sharedDirectories) delete bound[name];
    for (const issue of check(bound)) {
      const name = issue.path.split(/[.[]/)[1] ?? '(root)';
      if (issue.keyword === 'required') problems.push({ code: 'input_missing', field: name, params: { input: name } });
      else problems.push({ code: 'input_invalid', field: name, params: { input: name, path: issue.path, reason: issue.text } });
    }
    return problems.length > 0 ? { ok: false, problems } : { ok: true, inputs: bound };
  };
}

/**
 * Renders `{{inputs.*}}` placeholders of a goal as text (the goal is always a string): a string
 * value is inserted as is, any other as JSON. Other placeholders, and those whose input or
 * path is missing, are left untouched. Undefined stays undefined.
 */
export function renderGoal(goal: string | undefined, inputs: Readonly<Record<string, unknown>>): string | undefined {
  if (goal === undefined) return undefined;
  return goal.replace(/\{\{([^{}]*)\}\}/g, (whole, inner: string) => {
    const parsed = parseReference(inner, whole);
    if (!parsed.ok || parsed.ref.kind !== 'inputs' || !Object.hasOwn(inputs, parsed.ref.name)) return whole;
    const value = getPath(inputs[parsed.ref.name], parsed.ref.path);
    if (value === undefined) return whole;
    return typeof value === 'string' ? value : JSON.stringify(value);
  });
}
