import type { CatalogEntry } from './catalog';
import { isRetrySafe } from './catalog';
import type { Problem } from './errors';
import { type AgentPlan, AgentPlanSchema, MAX_ATTEMPTS, MAX_STEPS, type PlanStep, StepSchema } from './plan';
import { collectFileInputs, collectReferences, formatPath, type PathPart } from './references';
import { checkSchema } from './schema-check';

/**
 * Plan validation: every rule, every problem reported at once, before any tool runs.
 * The host runs it on supplied, drafted and edited plans and on saved workflows; the canvas runs
 * the same function for inline diagnostics.
 */

/**
 * What validation needs to know about a catalog tool: its name, input schema, effect,
 * idempotence, source and availability.
 */
export type ToolInfo = Pick<CatalogEntry, 'name' | 'inputSchema' | 'effect' | 'idempotent' | 'source' | 'available'>;

/** What `validatePlan` checks the plan against. */
export interface ValidationContext {
  /** Looks a tool up in the catalog snapshot the plan will run against; undefined when unknown. */
  tool: (name: string) => ToolInfo | undefined;
  /**
   * Declared input names (a workflow's schema properties, or a bare run's `inputs` keys);
   * `{{inputs.<name>}}` must name one (`ref_undeclared_input`).
   */
  inputNames: ReadonlySet<string>;
  /** Declared file input names; `@file:<name>` must name one (`ref_undeclared_file`). Default `inputNames`. */
  fileInputNames?: ReadonlySet<string>;
  /** When true, any step whose tool is not a read tool (model steps included) is refused (`read_only_step`). */
  readOnly?: boolean;
  /**
   * Extra per-step checks (e.g. workflows forbid nested workflow tools); its problems are added
   * to the step's own. Called once per step whose shape is sound.
   */
  extraStepCheck?: (step: PlanStep, tool: ToolInfo | undefined) => Problem[];
}

/** The typed plan, or every problem found (never both, never an empty list). */
export type ValidationResult = { ok: true; plan: AgentPlan } | { ok: false; problems: Problem[] };

/**
 * Shape problems from the zod schema, one `plan_schema` per issue: `field` and `path` are the
 * issue's location (`.steps[2].id`, `(root)` for the plan itself), `reason` zod's message, and
 * `stepId` the step's id when the issue sits inside a step that has a string id.
 */
function parsePlan(input: unknown): { plan: AgentPlan; problems?: undefined } | { problems: Problem[] } {
  const parsed = AgentPlanSchema.safeParse(input);
  if (parsed.success) return { plan: parsed.data };
  const problems = parsed.error.issues.map((issue): Problem => {
    const path = issue.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('') || '(root)';
    const stepIndex = issue.path[0] === 'steps' && typeof issue.path[1] === 'number' ? issue.path[1] : undefined;
    const stepId = stepIndex !== undefined ? stepIdAt(input, stepIndex) : undefined;
    return { code: 'plan_schema', field: path, stepId, params: { path, reason: issue.message } };
  });
  return { problems };
}

/** The string id of the raw step at `index`, if the input has one there. */
function stepIdAt(input: unknown, index: number): string | undefined {
  const steps = (input as { steps?: unknown })?.steps;
  const step = Array.isArray(steps) ? steps[index] : undefined;
  const id = (step as { id?: unknown } | undefined)?.id;
  return typeof id === 'string' ? id : undefined;
}

/**
 * Finds one dependency cycle, as a list of ids (first id repeated at the end), or undefined.
 * Unknown dependencies and self-dependencies are ignored here (they have their own codes).
 */
export function findCycle(steps: readonly PlanStep[]): string[] | undefined {
  const deps = new Map(steps.map((s) => [s.id, s.dependsOn ?? []]));
  const state = new Map<string, 1 | 2>();
  const stack: string[] = [];
  const visit = (id: string): string[] | undefined => {
    state.set(id, 1);
    stack.push(id);
    for (const d of deps.get(id) ?? []) {
      if (!deps.has(d) || d === id) continue;
      if (state.get(d) === 1) return [...stack.slice(stack.indexOf(d)), d];
      if (!state.has(d)) {
        const found = visit(d);
        if (found) return found;
      }
    }
    stack.pop();
    state.set(id, 2);
    return undefined;
  };
  for (const s of steps) {
    if (!state.has(s.id)) {
      const found = visit(s.id);
      if (found) return found;
    }
  }
  return undefined;
}

/**
 * Transitive prerequisites of every step, by id: the steps it depends on, directly or through
 * others. Unknown ids are ignored. Meant for acyclic plans (check `findCycle` first).
 */
export function prerequisites(steps: readonly PlanStep[]): Map<string, Set<string>> {
  const deps = new Map(steps.map((s) => [s.id, s.dependsOn ?? []]));
  const memo = new Map<string, Set<string>>();
  const walk = (id: string, seen: Set<string>): Set<string> => {
    const hit = memo.get(id);
    if (hit) return hit;
    const out = new Set<string>();
    for (const d of deps.get(id) ?? []) {
      if (!deps.has(d) || seen.has(d)) continue;
      out.add(d);
      for (const t of walk(d, new Set([...seen, id]))) out.add(t);
    }
    memo.set(id, out);
    return out;
  };
  for (const s of steps) walk(s.id, new Set());
  return memo;
}

const NONE: ReadonlySet<string> = new Set();

/**
 * Reference problems of one step's `arguments` and `instruction`: malformed placeholders,
 * unknown `steps.N` / `node.<id>` targets, targets that are not prerequisites of the step,
 * `last` without any dependency, undeclared inputs, and `@file:` names that are not declared
 * file inputs. `field` is the string's location inside the step (`arguments.path`).
 */
function referenceProblems(step: PlanStep, steps: readonly PlanStep[], ids: ReadonlySet<string>, pre: () => ReadonlySet<string>, ctx: ValidationContext): Problem[] {
  const problems: Problem[] = [];
  const fileNames = ctx.fileInputNames ?? ctx.inputNames;
  const scanned = [
    ...collectReferences(step.arguments ?? {}, ['arguments']),
    ...collectReferences(step.instruction ?? '', ['instruction']),
  ];
  for (const { token, at } of scanned) {
    const field = formatPath(at as PathPart[]).slice(1);
    if (!token.ok) {
      problems.push({ code: 'ref_malformed', stepId: step.id, field, params: { stepId: step.id, ref: token.raw } });
      continue;
    }
    const ref = token.ref;
    let target: string | undefined;
    if (ref.kind === 'steps') {
      target = steps[ref.index - 1]?.id;
      if (!target) {
        problems.push({ code: 'ref_unknown_step', stepId: step.id, field, params: { stepId: step.id, target: `steps.${ref.index}` } });
        continue;
      }
    } else if (ref.kind === 'node') {
      target = ref.id;
      if (!ids.has(target)) {
        problems.push({ code: 'ref_unknown_step', stepId: step.id, field, params: { stepId: step.id, target } });
        continue;
      }
    } else if (ref.kind === 'last') {
      if ((step.dependsOn ?? []).length === 0) problems.push({ code: 'ref_last_without_dependency', stepId: step.id, field, params: { stepId: step.id } });
      continue;
    } else {
      if (!ctx.inputNames.has(ref.name)) problems.push({ code: 'ref_undeclared_input', stepId: step.id, field, params: { stepId: step.id, input: ref.name } });
      continue;
    }
    if (!pre().has(target)) problems.push({ code: 'ref_not_prerequisite', stepId: step.id, field, params: { stepId: step.id, target } });
  }
  for (const name of collectFileInputs(step.arguments ?? {})) {
    if (!fileNames.has(name)) problems.push({ code: 'ref_undeclared_file', stepId: step.id, field: 'arguments', params: { stepId: step.id, input: name } });
  }
  return problems;
}

/**
 * True for a FileRef object: exactly the key `fileRef`, or exactly the keys `id`, `name`,
 * `size` and `sha256` (an uploaded file). It becomes a path at dispatch, so its place in the
 * arguments is not checked against the tool's schema before then.
 */
export function isFileRefShape(value: unknown): boolean {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value).sort().join(',');
  return keys === 'fileRef' || keys === 'id,name,sha256,size';
}

/** JSON pointers of every FileRef object inside a value (`/a/0/b`; `/` for the value itself). */
function fileRefPointers(value: unknown, at: string[] = []): string[] {
  if (isFileRefShape(value)) return [`/${at.join('/')}`];
  if (Array.isArray(value)) return value.flatMap((v, i) => fileRefPointers(v, [...at, String(i)]));
  if (value && typeof value === 'object') return Object.entries(value).flatMap(([k, v]) => fileRefPointers(v, [...at, k]));
  return [];
}

/**
 * Drops issues located at (or below) an exact placeholder or a FileRef object: their value (a
 * type, a resolved path) is only known at dispatch.
 */
function literalArgumentProblems(step: PlanStep, tool: ToolInfo): Problem[] {
  const args = step.arguments ?? {};
  const dynamic = [
    ...collectReferences(args)
      .filter((f) => f.exact)
      .map((f) => `/${f.at.map(String).join('/')}`),
    ...fileRefPointers(args),
  ];
  const issues = checkSchema(tool.inputSchema, args).filter((issue) => {
    if (dynamic.some((d) => issue.pointer === d || issue.pointer.startsWith(`${d}/`))) return false;
    return true;
  });
  return issues.map((issue) => ({
    code: 'step_invalid_arguments',
    stepId: step.id,
    field: `arguments${issue.path === '(root)' ? '' : issue.path}`,
    params: { stepId: step.id, path: issue.path, reason: issue.message },
  }));
}

/**
 * One step's own rules: its tool is known and available, a model step has an instruction,
 * dependencies name other known steps, retries are in range and safe, read-only mode is kept,
 * literal arguments fit the tool's schema (pinned steps excepted), plus the caller's extra check.
 */
function stepProblems(step: PlanStep, ids: Map<string, number>, ctx: ValidationContext): Problem[] {
  const problems: Problem[] = [];
  const p = (code: string, params: Record<string, unknown>, field?: string) =>
    problems.push({ code, stepId: step.id, field, params: { stepId: step.id, ...params } });
  const tool = step.tool ? ctx.tool(step.tool) : undefined;
  if (step.tool && !tool) p('step_unknown_tool', { tool: step.tool }, 'tool');
  if (tool && !tool.available) p('step_unavailable_tool', { tool: tool.name }, 'tool');
  if (!step.tool && !step.instruction?.trim()) p('step_missing_instruction', {}, 'instruction');
  for (const d of step.dependsOn ?? []) {
    if (d === step.id) p('step_self_dependency', {}, 'dependsOn');
    else if (!ids.has(d)) p('step_unknown_dependency', { dependency: d }, 'dependsOn');
  }
  const attempts = step.retry?.maxAttempts;
  if (attempts !== undefined && (attempts < 1 || attempts > MAX_ATTEMPTS)) p('retry_range', {}, 'retry.maxAttempts');
  if (attempts !== undefined && attempts > 1) {
    if (step.pinned) p('pinned_with_retry', {}, 'retry');
    if (!tool || !isRetrySafe(tool)) p('retry_unsafe', { tool: step.tool ?? '(model step)', effect: tool?.effect ?? 'model' }, 'retry');
  }
  if (ctx.readOnly && (!tool || tool.effect !== 'read')) p('read_only_step', { tool: step.tool ?? '(model step)', effect: tool?.effect ?? 'model' }, 'tool');
  if (tool && step.arguments && !step.pinned) problems.push(...literalArgumentProblems(step, tool));
  if (ctx.extraStepCheck) problems.push(...ctx.extraStepCheck(step, tool));
  return problems;
}

/**
 * Problems of the steps alone: unique ids (`step_duplicate_id`), each step's own rules, and
 * cycles (`plan_cycle`, naming the loop as `a → b → a`). `knownIds` are ids of steps whose own
 * shape is broken: dependencies on them are not reported as unknown.
 */
function stepSetProblems(steps: readonly PlanStep[], knownIds: readonly string[], ctx: ValidationContext): Problem[] {
  const problems: Problem[] = [];
  const ids = new Map<string, number>();
  steps.forEach((s, i) => {
    if (ids.has(s.id)) problems.push({ code: 'step_duplicate_id', stepId: s.id, field: 'id', params: { stepId: s.id } });
    else ids.set(s.id, i);
  });
  for (const id of knownIds) if (!ids.has(id)) ids.set(id, -1);
  for (const step of steps) problems.push(...stepProblems(step, ids, ctx));
  const cycle = findCycle(steps);
  if (cycle) problems.push({ code: 'plan_cycle', stepId: cycle[0], field: 'dependsOn', params: { cycle: cycle.join(' → ') } });
  return problems;
}

/**
 * When the plan's shape is broken, the steps whose own shape is sound are still checked, so one
 * answer lists every problem (a malformed step does not hide an unknown tool in another).
 */
function salvagedProblems(input: unknown, ctx: ValidationContext): Problem[] {
  const raw = (input as { steps?: unknown } | null)?.steps;
  if (!Array.isArray(raw)) return [];
  const sound: PlanStep[] = [];
  const knownIds: string[] = [];
  for (const candidate of raw) {
    const parsed = StepSchema.safeParse(candidate);
    if (parsed.success) sound.push(parsed.data);
    const id = (candidate as { id?: unknown } | null)?.id;
    if (typeof id === 'string') knownIds.push(id);
  }
  return stepSetProblems(sound, knownIds, ctx);
}

/**
 * Validates a plan in full, before any tool runs. Returns the typed plan, or every problem
 * found: the shape (`plan_schema`, with the sound steps still checked), 1..`MAX_STEPS` steps,
 * unique ids, known and available tools, instructions of model steps, dependencies and
 * cycles, retry ranges and safety, read-only mode, literal arguments against each tool's input
 * schema, and every reference (well-formed, known target, a prerequisite, declared input).
 */
export function validatePlan(input: unknown, ctx: ValidationContext): ValidationResult {
  const parsed = parsePlan(input);
  if (parsed.problems) return { ok: false, problems: [...parsed.problems, ...salvagedProblems(input, ctx)] };
  const { plan } = parsed;
  const problems: Problem[] = [];
  if (plan.steps.length === 0) problems.push({ code: 'plan_empty', params: {} });
  if (plan.steps.length > MAX_STEPS) problems.push({ code: 'plan_too_many_steps', params: { count: plan.steps.length } });
  problems.push(...stepSetProblems(plan.steps, [], ctx));
  const ids = new Set(plan.steps.map((s) => s.id));
  // the transitive prerequisites are made only when a reference to a step needs them
  let pre: Map<string, Set<string>> | undefined;
  for (const step of plan.steps) problems.push(...referenceProblems(step, plan.steps, ids, () => (pre ??= prerequisites(plan.steps)).get(step.id) ?? NONE, ctx));
  return problems.length > 0 ? { ok: false, problems } : { ok: true, plan };
}
