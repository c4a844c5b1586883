import { folderProblems } from './folder-check';
import type { CatalogEntry } from './catalog';
import { isRetrySafe } from './catalog';
import type { Problem } from './errors';
import { dependencyStep, parseDependency, stepKind, stepPorts } from './control-flow';
import { type AgentPlan, AgentPlanSchema, MAX_ATTEMPTS, MAX_STEPS, type PlanStep, STEP_TIMEOUT_MS, StepSchema } from './plan';
import { collectFileInputs, collectReferences, formatPath, type PathPart } from './references';
import { checkSchema, type FieldLabel } from './schema-check';
import { zodIssueText } from './zod-issue';
import { flowProblems, flowReferenceSites } from './validate-flow';
import { SHELL_TEMPLATE_ARGUMENTS, shellTemplateProblems } from './shell-template';
import { secretProblems } from './secrets';

/**
 * Plan validation: every rule, every problem reported at once, before any tool runs.
 * The host runs it on supplied, drafted and edited plans and on saved workflows; the canvas runs
 * the same function for inline diagnostics.
 */

/**
 * What validation needs to know about a catalog tool: its name, input schema, effect,
 * idempotence, source and availability.
 */
export type ToolInfo = Pick<CatalogEntry, 'name' | 'inputSchema' | 'effect' | 'idempotent' | 'source' | 'available'> & Partial<Pick<CatalogEntry, 'flowNode'>>;

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
  /**
   * The uploaded-file inputs among them (not folders created per run): a tool's output-folder
   * argument given as `@file:<one of these>` is `step_folder_not_folder`. Unchecked when absent.
   */
  uploadInputNames?: ReadonlySet<string>;
  /**
   * The caller's secret names: a `{{secrets.NAME}}` outside them is `secret_unknown`. Without
   * it names are not checked; where a secret may stand is checked either way.
   */
  secretNames?: ReadonlySet<string>;
  /** When true, any step whose tool is not a read tool (model steps included) is refused (`read_only_step`). */
  readOnly?: boolean;
  /**
   * Extra per-step checks (e.g. workflows forbid nested workflow tools); its problems are added
   * to the step's own. Called once per step whose shape is sound.
   */
  extraStepCheck?: (step: PlanStep, tool: ToolInfo | undefined) => Problem[];
}

/** The typed plan, or every problem found (never both, never an empty list). */
export type ValidationResult =
  | {
      /** The plan is valid. */
      ok: true;
      /** It, typed. */
      plan: AgentPlan;
    }
  | {
      /** The plan is refused. */
      ok: false;
      /** Every problem found (never empty). */
      problems: Problem[];
    };

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
    return { code: 'plan_schema', field: path, stepId, params: { path, reason: zodIssueText(issue) } };
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
 * Ports are dropped (`check:big` is `check`). Unknown dependencies and self-dependencies are
 * ignored here (they have their own codes).
 */
export function findCycle(steps: readonly PlanStep[]): string[] | undefined {
  const deps = new Map(steps.map((s) => [s.id, (s.dependsOn ?? []).map(dependencyStep)]));
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
 * others, ports dropped. Unknown ids are ignored. Meant for acyclic plans (check `findCycle` first).
 */
export function prerequisites(steps: readonly PlanStep[]): Map<string, Set<string>> {
  const deps = new Map(steps.map((s) => [s.id, (s.dependsOn ?? []).map(dependencyStep)]));
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

/**
 * Where every step of a plan sits. A step belongs to the top level or to one forEach's body
 * (its scope): `dependsOn` names steps of the same scope; references reach the scope's
 * prerequisites of the step and, from a body, the loop's own prerequisites.
 */
interface PlanIndex {
  /** The top-level steps, in plan order (`steps.N` counts these). */
  top: readonly PlanStep[];
  /** Every step by id (first occurrence), with the forEach whose body holds it. */
  located: Map<string, { step: PlanStep; loop?: PlanStep }>;
  /** Ids of raw steps whose own shape is broken: a dependency on them is not reported as unknown. */
  known: ReadonlySet<string>;
  /** The steps of a scope by id (`undefined`: the top level). */
  scope: (loop: PlanStep | undefined) => Map<string, PlanStep>;
  /** Transitive prerequisites within a scope, made when a reference first needs them. */
  pre: (loop: PlanStep | undefined) => Map<string, Set<string>>;
}

function indexPlan(top: readonly PlanStep[], knownIds: readonly string[] = []): PlanIndex {
  const located = new Map<string, { step: PlanStep; loop?: PlanStep }>();
  for (const step of top) if (!located.has(step.id)) located.set(step.id, { step });
  for (const loop of top) for (const step of loop.steps ?? []) if (!located.has(step.id)) located.set(step.id, { step, loop });
  const scopes = new Map<PlanStep | undefined, Map<string, PlanStep>>();
  const pres = new Map<PlanStep | undefined, Map<string, Set<string>>>();
  const members = (loop: PlanStep | undefined) => (loop ? (loop.steps ?? []) : top);
  return {
    top,
    located,
    known: new Set(knownIds),
    scope: (loop) => {
      let hit = scopes.get(loop);
      if (!hit) {
        hit = new Map();
        for (const s of members(loop)) if (!hit.has(s.id)) hit.set(s.id, s);
        scopes.set(loop, hit);
      }
      return hit;
    },
    pre: (loop) => {
      let hit = pres.get(loop);
      if (!hit) pres.set(loop, (hit = prerequisites(members(loop))));
      return hit;
    },
  };
}

/** Every string of a step that may hold references: `arguments`, `instruction`, comparison sides, a forEach's `items`. */
function referenceSites(step: PlanStep): ReturnType<typeof collectReferences> {
  return [
    ...collectReferences(step.arguments ?? {}, ['arguments']),
    ...collectReferences(step.instruction ?? '', ['instruction']),
    ...flowReferenceSites(step).flatMap((site) => collectReferences(site.value, site.at)),
  ];
}

/**
 * Whether `step` (in the body of `loop`, or top-level) may read `target`'s result: a step of
 * another loop's body never (`ref_body_step`), a step of its own scope when it is a
 * prerequisite, a top-level step from a body when it is a prerequisite of the loop.
 */
function targetProblem(step: PlanStep, loop: PlanStep | undefined, target: string, index: PlanIndex): { code: string; params: Record<string, unknown> } | undefined {
  const where = index.located.get(target);
  if (where?.loop && where.loop !== loop) return { code: 'ref_body_step', params: { stepId: step.id, target, loop: where.loop.id } };
  const reachable = where?.loop === loop ? index.pre(loop).get(step.id) : index.pre(undefined).get(loop?.id ?? '');
  return reachable?.has(target) ? undefined : { code: 'ref_not_prerequisite', params: { stepId: step.id, target } };
}

/**
 * Reference problems of one step: malformed placeholders, unknown `steps.N` / `node.<id>`
 * targets, targets the step may not read (see `targetProblem`), `last` without any dependency,
 * undeclared inputs, `{{item}}`/`{{index}}` outside a forEach body, and `@file:` names that are
 * not declared file inputs. `field` is the string's location inside the step (`arguments.path`).
 */
function referenceProblems(step: PlanStep, loop: PlanStep | undefined, index: PlanIndex, ctx: ValidationContext): Problem[] {
  const problems: Problem[] = [];
  const fileNames = ctx.fileInputNames ?? ctx.inputNames;
  for (const { token, at } of referenceSites(step)) {
    const field = formatPath(at as PathPart[]).slice(1);
    const p = (code: string, params: Record<string, unknown>) => problems.push({ code, stepId: step.id, field, params: { stepId: step.id, ...params } });
    if (!token.ok) {
      p('ref_malformed', { ref: token.raw });
      continue;
    }
    const ref = token.ref;
    let target: string | undefined;
    if (ref.kind === 'steps') {
      target = index.top[ref.index - 1]?.id;
      if (!target) {
        p('ref_unknown_step', { target: `steps.${ref.index}` });
        continue;
      }
    } else if (ref.kind === 'node') {
      target = ref.id;
      if (!index.located.has(target)) {
        p('ref_unknown_step', { target });
        continue;
      }
    } else if (ref.kind === 'last') {
      if ((step.dependsOn ?? []).length === 0) p('ref_last_without_dependency', {});
      continue;
    } else if (ref.kind === 'item' || ref.kind === 'index') {
      if (!loop) p('ref_item_outside_loop', { ref: ref.raw });
      continue;
    } else if (ref.kind === 'secrets') {
      continue; // where a secret stands and whether it exists: `secretProblems`
    } else {
      if (!ctx.inputNames.has(ref.name)) p('ref_undeclared_input', { input: ref.name });
      continue;
    }
    const wrong = targetProblem(step, loop, target, index);
    if (wrong) p(wrong.code, wrong.params);
  }
  for (const name of collectFileInputs(step.arguments ?? {})) {
    if (!fileNames.has(name)) problems.push({ code: 'ref_undeclared_file', stepId: step.id, field: 'arguments', params: { stepId: step.id, input: name } });
  }
  // a placeholder in shell source must sit where quoting keeps its value data
  for (const key of SHELL_TEMPLATE_ARGUMENTS[step.tool ?? ''] ?? []) {
    const value = step.arguments?.[key];
    if (typeof value === 'string') problems.push(...shellTemplateProblems(value, step.id, `arguments.${key}`));
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
  const issues = checkSchema(tool.inputSchema, args, inputLabels(tool)).filter((issue) => {
    if (dynamic.some((d) => issue.pointer === d || issue.pointer.startsWith(`${d}/`))) return false;
    return true;
  });
  return issues.map((issue) => ({
    code: 'step_invalid_arguments',
    stepId: step.id,
    field: `arguments${issue.path === '(root)' ? '' : issue.path}`,
    params: { stepId: step.id, path: issue.path, reason: issue.text },
  }));
}

/**
 * How a tool's argument is named to a person: its flow node's input label, with the label's
 * translations (`flowNode.i18n[locale].inputs[name].label`); none when the node declares none.
 */
export function inputLabels(tool: Pick<ToolInfo, 'flowNode'>): FieldLabel | undefined {
  const node = tool.flowNode as { inputs?: Record<string, { label?: unknown }>; i18n?: Record<string, { inputs?: Record<string, { label?: unknown }> }> } | undefined;
  if (!node?.inputs) return undefined;
  return (name) => {
    const en = node.inputs?.[name]?.label;
    if (typeof en !== 'string' || !en) return undefined;
    const zh = node.i18n?.['zh-CN']?.inputs?.[name]?.label;
    return { $texts: { en, ...(typeof zh === 'string' && zh ? { 'zh-CN': zh } : {}) } };
  };
}

/**
 * `dependsOn` problems: a step of the same scope (a forEach body depends on its own steps only;
 * `foreach_body_dependency` when it crosses the body's edge), never the step itself, and a port
 * the named step offers (`check:big` needs case `big`; `step_unknown_dependency` otherwise).
 */
function dependencyProblems(step: PlanStep, loop: PlanStep | undefined, index: PlanIndex): Problem[] {
  const problems: Problem[] = [];
  const siblings = index.scope(loop);
  for (const entry of step.dependsOn ?? []) {
    const p = (code: string) => problems.push({ code, stepId: step.id, field: 'dependsOn', params: { stepId: step.id, dependency: entry } });
    const { stepId, port } = parseDependency(entry);
    const sibling = siblings.get(stepId);
    if (stepId === step.id) p('step_self_dependency');
    else if (sibling) {
      if (port !== undefined && !stepPorts(sibling).includes(port)) p('step_unknown_dependency');
    } else if (index.located.has(stepId)) p('foreach_body_dependency');
    else if (!index.known.has(stepId)) p('step_unknown_dependency');
  }
  return problems;
}

/**
 * One step's own rules: the fields its kind takes and its control-flow rules, its tool is known
 * and available, a model step has an instruction, dependencies are sound, retries are in range
 * and safe, read-only mode is kept, literal arguments fit the tool's schema (pinned steps
 * excepted), plus the caller's extra check.
 */
function stepProblems(step: PlanStep, loop: PlanStep | undefined, index: PlanIndex, ctx: ValidationContext): Problem[] {
  const problems: Problem[] = flowProblems(step, loop !== undefined);
  const p = (code: string, params: Record<string, unknown>, field?: string) =>
    problems.push({ code, stepId: step.id, field, params: { stepId: step.id, ...params } });
  const kind = stepKind(step);
  const tool = step.tool ? ctx.tool(step.tool) : undefined;
  if (step.tool && !tool) p('step_unknown_tool', { tool: step.tool }, 'tool');
  if (tool && !tool.available) p('step_unavailable_tool', { tool: tool.name }, 'tool');
  if (kind === 'model' && !step.instruction?.trim()) p('step_missing_instruction', {}, 'instruction');
  problems.push(...dependencyProblems(step, loop, index));
  const attempts = step.retry?.maxAttempts;
  if (attempts !== undefined && (attempts < 1 || attempts > MAX_ATTEMPTS)) p('retry_range', {}, 'retry.maxAttempts');
  if (attempts !== undefined && attempts > 1 && (kind === 'tool' || kind === 'model')) {
    if (step.pinned) p('pinned_with_retry', {}, 'retry');
    if (!tool || !isRetrySafe(tool)) p('retry_unsafe', { tool: step.tool ?? '(model step)', effect: tool?.effect ?? 'model' }, 'retry');
  }
  // an input step's timeoutMs is how long it waits for a person (its own range, validate-flow.ts)
  if (kind !== 'input' && step.timeoutMs !== undefined && (step.timeoutMs < STEP_TIMEOUT_MS.min || step.timeoutMs > STEP_TIMEOUT_MS.max)) p('step_timeout_range', { timeoutMs: step.timeoutMs, ...STEP_TIMEOUT_MS }, 'timeoutMs');
  // structured conditions, loops and inputs have no effect of their own; a model condition is a model call
  const effectFree = kind === 'forEach' || kind === 'input' || (kind === 'condition' && !step.instruction?.trim());
  if (ctx.readOnly && !effectFree && tool?.effect !== 'read') p('read_only_step', { tool: step.tool ?? '(model step)', effect: tool?.effect ?? 'model' }, 'tool');
  // output folders first, in plain words; the generic schema issue of the same argument is then left out
  const folders = tool && !step.pinned ? folderProblems(step, tool.inputSchema, ctx.uploadInputNames) : [];
  problems.push(...folders);
  const said = new Set(folders.map((f) => f.field));
  if (tool && step.arguments && !step.pinned) problems.push(...literalArgumentProblems(step, tool).filter((f) => !said.has(f.field)));
  if (ctx.extraStepCheck) problems.push(...ctx.extraStepCheck(step, tool));
  return problems;
}

/** Every step with the forEach whose body holds it (`undefined` for a top-level step), in plan order. */
function everyStep(top: readonly PlanStep[]): { step: PlanStep; loop?: PlanStep }[] {
  return top.flatMap((step) => [{ step }, ...(step.steps ?? []).map((inner) => ({ step: inner, loop: step }))]);
}

/**
 * Problems of the steps alone: ids unique across the whole plan, bodies included
 * (`step_duplicate_id`), each step's own rules, and cycles in each scope (`plan_cycle`,
 * naming the loop as `a → b → a`). `knownIds` are ids of steps whose own shape is broken:
 * dependencies on them are not reported as unknown.
 */
function stepSetProblems(steps: readonly PlanStep[], knownIds: readonly string[], ctx: ValidationContext): Problem[] {
  const problems: Problem[] = [];
  const seen = new Set<string>();
  const all = everyStep(steps);
  for (const { step: s } of all) {
    if (seen.has(s.id)) problems.push({ code: 'step_duplicate_id', stepId: s.id, field: 'id', params: { stepId: s.id } });
    seen.add(s.id);
  }
  const index = indexPlan(steps, knownIds);
  for (const { step, loop } of all) problems.push(...stepProblems(step, loop, index, ctx));
  for (const scope of [steps, ...steps.map((s) => s.steps ?? [])]) {
    const cycle = findCycle(scope);
    if (cycle) problems.push({ code: 'plan_cycle', stepId: cycle[0], field: 'dependsOn', params: { cycle: cycle.join(' → ') } });
  }
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
  const idOf = (candidate: unknown) => (candidate as { id?: unknown } | null)?.id;
  for (const candidate of raw) {
    const parsed = StepSchema.safeParse(candidate);
    if (parsed.success) sound.push(parsed.data);
    const id = idOf(candidate);
    if (typeof id === 'string') knownIds.push(id);
    const body = (candidate as { steps?: unknown } | null)?.steps;
    if (Array.isArray(body)) for (const inner of body) if (typeof idOf(inner) === 'string') knownIds.push(idOf(inner) as string);
  }
  return stepSetProblems(sound, knownIds, ctx);
}

/** Steps a plan counts against `MAX_STEPS`: each top-level step, and each body step once. */
export function countSteps(plan: Pick<AgentPlan, 'steps'>): number {
  return plan.steps.reduce((n, s) => n + 1 + (s.steps?.length ?? 0), 0);
}

/**
 * Validates a plan in full, before any tool runs. Returns the typed plan, or every problem
 * found: the shape (`plan_schema`, with the sound steps still checked), 1..`MAX_STEPS` steps
 * (body steps counted once), unique ids, the fields of each step's kind, conditions (cases,
 * comparisons, operators, regexes) and forEach loops (list, limits, body), known and available
 * tools, instructions of model steps, dependencies, ports and cycles, retry ranges and safety,
 * read-only mode, literal arguments against each tool's input schema, and every reference
 * (well-formed, known target, readable from the step, declared input, `{{item}}` in a body).
 */
export function validatePlan(input: unknown, ctx: ValidationContext): ValidationResult {
  const parsed = parsePlan(input);
  if (parsed.problems) return { ok: false, problems: [...parsed.problems, ...salvagedProblems(input, ctx)] };
  const { plan } = parsed;
  const problems: Problem[] = [];
  const count = countSteps(plan);
  if (plan.steps.length === 0) problems.push({ code: 'plan_empty', params: {} });
  if (count > MAX_STEPS) problems.push({ code: 'plan_too_many_steps', params: { count } });
  problems.push(...stepSetProblems(plan.steps, [], ctx));
  const index = indexPlan(plan.steps);
  for (const { step, loop } of everyStep(plan.steps)) problems.push(...referenceProblems(step, loop, index, ctx));
  problems.push(...secretProblems(plan, ctx.secretNames));
  return problems.length > 0 ? { ok: false, problems } : { ok: true, plan };
}
