import type { JsonSchema } from './catalog';
import type { PlanStep } from './plan';
import type { Problem } from './errors';
import { fileInputOf } from './references';

/**
 * Output folders of steps that write files (Filter rows, Split, Merge …): a tool declares such an
 * argument with `format: "fengyu-directory"`. Before any run, a required folder argument left
 * empty is `step_folder_missing`, and one given as `@file:<name>` where `<name>` is an uploaded
 * file input rather than a folder created per run is `step_folder_not_folder` — both name the
 * step by its title and the argument by its title, and say what to do. The generic schema issue
 * of the same argument is then left out (`folderArguments` names them).
 */

export const FOLDER_FORMAT = 'fengyu-directory';

type Prop = JsonSchema & { title?: string };

/** The tool's folder arguments: name → its title (or name) and whether it is required. */
export function folderArguments(schema: JsonSchema | undefined): Array<{ name: string; title: string; required: boolean }> {
  const props = (schema?.properties ?? {}) as Record<string, Prop>;
  const required = new Set(Array.isArray(schema?.required) ? (schema.required as string[]) : []);
  return Object.entries(props)
    .filter(([, p]) => p && typeof p === 'object' && p.format === FOLDER_FORMAT)
    .map(([name, p]) => ({ name, title: typeof p.title === 'string' && p.title ? p.title : name, required: required.has(name) }));
}

/** A step's folder problems; `files` are the uploaded-file inputs (a `@file:` naming one is not a folder). */
export function folderProblems(step: PlanStep, schema: JsonSchema | undefined, files: ReadonlySet<string> | undefined): Problem[] {
  const out: Problem[] = [];
  const stepName = step.title?.trim() || step.id;
  for (const arg of folderArguments(schema)) {
    const value = step.arguments?.[arg.name];
    const field = `arguments.${arg.name}`;
    const params = { stepId: step.id, step: stepName, argument: arg.title };
    if ((value === undefined || value === '') && arg.required) out.push({ code: 'step_folder_missing', stepId: step.id, field, params });
    else if (typeof value === 'string' && files) {
      const input = fileInputOf(value);
      if (input !== undefined && value.trim() === `@file:${input}` && files.has(input)) out.push({ code: 'step_folder_not_folder', stepId: step.id, field, params: { ...params, input } });
    }
  }
  return out;
}
