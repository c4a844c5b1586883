import { z } from 'zod';
import type { JsonSchema } from './catalog';
import type { Problem } from './errors';
import type { WorkflowMcp } from './mcp-serving';
import { PROTOTYPE_KEYS } from './object-keys';
import { type AgentPlan, AgentPlanSchema, type PlanStep } from './plan';
import { collectReferences } from './references';
import { isCompilableSchema } from './schema-check';
import { isLinearPattern, schemaPatterns } from './safe-regexp';
import { zodIssueText } from './zod-issue';
import { type ToolInfo, validatePlan } from './validate';

/**
 * Workflow definitions: the saved document, its input contract and the save-time
 * validator. The host runs `validateWorkflowDefinition` on every save, publish and run; the
 * canvas runs the same function for inline diagnostics. `checkInputs` (workflow-inputs.ts) is the
 * run-time binding check (the run dialog and `POST /api/workflows/{id}/run` share it). No I/O here.
 */

/**
 * Published workflows appear in the catalog as `run_workflow_<id>`; a saved definition may not
 * call such a tool itself (`workflow_nested_tool`).
 */
export const WORKFLOW_TOOL_PREFIX = 'run_workflow_';
/**
 * The rule every workflow id follows: a letter or digit, then up to 47 letters, digits, `_` or
 * `-` (1..48 characters), so that `run_workflow_<id>` is a valid model tool name (≤ 64).
 */
export const WORKFLOW_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,47}$/;
/**
 * Input (Start field) names: a letter or `_`, then letters, digits, `_` or `-`, so each is a
 * valid `{{inputs.<name>}}` and `@file:<name>` name. Object-internal names (`__proto__`,
 * `constructor`, `prototype`) are refused too (`input_name_invalid`).
 */
export const INPUT_NAME_PATTERN = /^[A-Za-z_][A-Za-z0-9_-]*$/;
/** Names that would shadow object internals; refused as input names. */
const RESERVED_NAMES = new Set(PROTOTYPE_KEYS);
/**
 * The authored canvas graph is stored verbatim up to this many bytes of UTF-8 JSON (512 KiB);
 * a larger one is refused with `workflow_graph_too_large`.
 */
export const MAX_GRAPH_BYTES = 512 * 1024;
/**
 * `format` of an input that takes an uploaded file: it is not a value input; a run binds it
 * through its `files` and steps use it as `@file:<name>`.
 */
export const FILE_INPUT_FORMAT = 'fengyu-file';
/**
 * `"x-fengyu-auto": "shared-directory"`: the run mints a fresh scratch directory for the input,
 * used as `@file:<name>`. The only accepted value of `x-fengyu-auto` (`input_auto_invalid`).
 */
export const SHARED_DIRECTORY = 'shared-directory';

/** The catalog tool name of workflow `id`: `run_workflow_<id>`. */
export const workflowToolName = (id: string): string => `${WORKFLOW_TOOL_PREFIX}${id}`;
/** True when `name` is a workflow tool name (starts with `run_workflow_`); false when absent. */
export const isWorkflowToolName = (name: string | undefined): boolean => !!name && name.startsWith(WORKFLOW_TOOL_PREFIX);

/**
 * Node positions by step id (canvas coordinates, numbers), used to rebuild a graph for
 * definitions saved without one. Extra keys in a position are dropped.
 */
export const LayoutSchema = z.record(
  z.string(),
  z
    .object({
      /** Horizontal canvas coordinate. */
      x: z.number(),
      /** Vertical canvas coordinate. */
      y: z.number(),
    })
    .strip(),
);

/**
 * What a client sends to create or save a definition (the plan is validated separately, by
 * `validatePlan`). Unknown top-level keys are dropped.
 */
export const WorkflowDraftSchema = z
  .object({
    /** Display name: 1..200 characters after trimming (`workflow_name_required`, `workflow_name_too_long`). */
    name: z.string().trim().min(1).max(200),
    /** What the workflow does; at most 4000 characters (`workflow_description_too_long`); default empty. */
    description: z.string().max(4000).default(''),
    /**
     * The input contract: a JSON Schema of `type: "object"` (see `inputSchemaProblems`);
     * default an object with no properties.
     */
    inputSchema: z.record(z.string(), z.unknown()).default({ type: 'object', properties: {} }),
    /** The AgentPlan the workflow runs; checked by `validateWorkflowDefinition`. */
    plan: z.unknown(),
    /**
     * The canvas document ({version, nodes, edges, notes}); opaque to the host, at most
     * `MAX_GRAPH_BYTES`. Null or absent: the graph is rebuilt from plan and layout.
     */
    graph: z.record(z.string(), z.unknown()).nullable().optional(),
    /** Node positions for a rebuilt graph; optional. */
    layout: LayoutSchema.optional(),
  })
  .strip();

/** A parsed save request (see `WorkflowDraftSchema`), with defaults applied. */
export type WorkflowDraft = z.infer<typeof WorkflowDraftSchema>;
/** `draft` until a version is first published; `published` from then on. */
export type WorkflowState = 'draft' | 'published';

/** A saved workflow as the API returns it: the current draft and its publication state. */
export interface WorkflowDefinition {
  /** The workflow id; matches `WORKFLOW_ID_PATTERN`. */
  id: string;
  /** Display name, 1..200 characters. */
  name: string;
  /** What the workflow does, at most 4000 characters (may be empty). */
  description: string;
  /** The input contract (an object JSON Schema). */
  inputSchema: JsonSchema;
  /** The draft's plan, valid when saved. */
  plan: AgentPlan;
  /**
   * The saved canvas graph, or one rebuilt from plan + layout when none was saved (see
   * `planToGraph`); at most `MAX_GRAPH_BYTES` when saved.
   */
  graph: Record<string, unknown>;
  /** True when `graph` was rebuilt rather than saved (the definition was saved without one). */
  graphReconstructed: boolean;
  /** Node positions by step id, when saved. */
  layout?: Record<
    string,
    {
      /** Horizontal canvas coordinate. */
      x: number;
      /** Vertical canvas coordinate. */
      y: number;
    }
  >;
  /**
   * `published` once any version was published (even while newer draft changes exist);
   * `draft` before.
   */
  state: WorkflowState;
  /**
   * The definition's revision: 1 on creation, one more on every change. Writes carry the
   * revision they were based on; a stale one is refused and changes nothing.
   */
  revision: number;
  /**
   * The active (last published) version, or null before the first publish. The workflow's
   * catalog tool (`run_workflow_<id>`) runs this version, not the draft.
   */
  publishedVersion: number | null;
  /**
   * The draft differs from the active version (only meaningful when published); false when
   * nothing was published.
   */
  hasDraftChanges: boolean;
  /** Whether the published version is served over MCP, and under which mode (see `WorkflowMcp`). */
  mcp: WorkflowMcp;
  /**
   * The workflow submitted as a background task (with the `failedRun` document) when a run of
   * this one fails; null when none. Not versioned.
   */
  errorWorkflowId?: string | null;
  /** When the definition was created: ISO 8601 UTC. */
  createdAt: string;
  /** When the definition last changed: ISO 8601 UTC. */
  updatedAt: string;
}

/** One published version of a workflow: an immutable copy of the definition at publish time. */
export interface WorkflowVersionInfo {
  /** The version number: 1 for the first publish, one more for each further one. */
  version: number;
  /** The definition revision the version was published from (see `WorkflowDefinition.revision`). */
  revision: number;
  /** The name at publish time. */
  name: string;
  /** The description at publish time. */
  description: string;
  /** When the version was published: ISO 8601 UTC. */
  publishedAt: string;
  /** True for the version runs and the catalog use (the last published one). */
  active: boolean;
}

/** A ready-made workflow a user can start a new definition from. */
export interface WorkflowTemplate {
  /** The template id, unique among templates. */
  id: string;
  /** Display name. */
  name: string;
  /** What the template does. */
  description: string;
  /** The group the template is listed under (default `general`); listed by category, then name. */
  category: string;
  /** The input contract a new definition starts with. */
  inputSchema: JsonSchema;
  /** The plan a new definition starts with. */
  plan: AgentPlan;
  /** The canvas graph a new definition starts with. */
  graph: Record<string, unknown>;
}

/**
 * `"x-fengyu-enum"`: the input's options come from a read tool. Either a tool name, or
 * `{tool, arguments?, itemsPath?, valueField?, labelField?}`; `itemsPath` locates the list in the
 * tool's result (default: the result itself, its `options` array, or its first array property); `valueField` defaults
 * to `id` (then `value`), `labelField` to `label` (then `name`, then the value).
 */
export interface EnumSource {
  /** The read tool that lists the options (1..200 characters). */
  tool: string;
  /** Arguments for the tool call; default none. */
  arguments?: Record<string, unknown>;
  /** Where the list is in the tool's result (a reference path, at most 200 characters). */
  itemsPath?: string;
  /** The item field holding the option's value (1..100 characters). */
  valueField?: string;
  /** The item field holding the option's label (1..100 characters). */
  labelField?: string;
}

/** The object form of `x-fengyu-enum`; unknown keys are refused. */
const EnumSourceSchema = z
  .object({
    tool: z.string().min(1).max(200),
    arguments: z.record(z.string(), z.unknown()).optional(),
    itemsPath: z.string().max(200).optional(),
    valueField: z.string().min(1).max(100).optional(),
    labelField: z.string().min(1).max(100).optional(),
  })
  .strict();

/**
 * The `x-fengyu-enum` source of an input property: a non-empty string becomes `{tool}`; an
 * object must match `EnumSource` exactly (unknown keys refused). Undefined when absent or
 * malformed.
 */
export function enumSourceOf(prop: unknown): EnumSource | undefined {
  const raw = (prop as Record<string, unknown> | undefined)?.['x-fengyu-enum'];
  if (typeof raw === 'string' && raw.length > 0) return { tool: raw };
  const parsed = EnumSourceSchema.safeParse(raw);
  return parsed.success ? parsed.data : undefined;
}

/**
 * The input contract read from a workflow's input schema. Every property lands in exactly one
 * of `values`, `files` and `sharedDirectories` (a shared directory wins over a file format).
 */
export interface InputContract {
  /** The schema's `properties` (empty when absent or not an object). */
  properties: Record<string, JsonSchema>;
  /** The schema's `required` names that are strings (empty when absent). */
  required: string[];
  /** Ordinary inputs, referenced as `{{inputs.<name>}}`; the only ones a run's `inputs` binds. */
  values: string[];
  /**
   * `format: "fengyu-file"` inputs, bound through the run's `files` as `@file:<name>`; a value
   * given for one in `inputs` is dropped.
   */
  files: string[];
  /**
   * `"x-fengyu-auto": "shared-directory"` inputs, bound as `@file:<name>` to a fresh directory;
   * a value given for one in `inputs` is dropped.
   */
  sharedDirectories: string[];
}

/**
 * Splits a workflow's input schema into value, file and shared-directory inputs. Never throws:
 * a malformed schema yields an empty contract (`inputSchemaProblems` reports why).
 */
export function inputContract(schema: JsonSchema | undefined): InputContract {
  const raw = schema?.properties;
  const properties = raw && typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, JsonSchema>) : {};
  const required = Array.isArray(schema?.required) ? (schema.required as unknown[]).filter((r): r is string => typeof r === 'string') : [];
  const c: InputContract = { properties, required, values: [], files: [], sharedDirectories: [] };
  for (const [name, prop] of Object.entries(properties)) {
    if (prop?.['x-fengyu-auto'] === SHARED_DIRECTORY) c.sharedDirectories.push(name);
    else if (prop?.format === FILE_INPUT_FORMAT) c.files.push(name);
    else c.values.push(name);
  }
  return c;
}

/**
 * Problems of the input schema itself, all at once: it must be an object schema with
 * `type: "object"`, object `properties`, an array `required` naming declared properties
 * (`input_required_undeclared`), and compile as JSON Schema (`input_schema_invalid`); each
 * name matches `INPUT_NAME_PATTERN`; `x-fengyu-auto` and `x-fengyu-enum` are well-formed.
 */
export function inputSchemaProblems(schema: unknown): Problem[] {
  const out: Problem[] = [];
  const bad = (reason: string, field = 'inputSchema') => out.push({ code: 'input_schema_invalid', field, params: { reason } });
  if (!schema || typeof schema !== 'object' || Array.isArray(schema)) return [{ code: 'input_schema_invalid', field: 'inputSchema', params: { reason: 'must be a JSON Schema object' } }];
  const s = schema as JsonSchema;
  if (s.type !== 'object') bad('its "type" must be "object"');
  if (s.properties !== undefined && (typeof s.properties !== 'object' || s.properties === null || Array.isArray(s.properties))) bad('"properties" must be an object');
  if (s.required !== undefined && !Array.isArray(s.required)) bad('"required" must be an array of names');
  const unsafe = schemaPatterns(s).filter((p) => !isLinearPattern(p));
  for (const pattern of unsafe) out.push({ code: 'input_pattern_unsafe', field: 'inputSchema', params: { pattern } });
  if (unsafe.length === 0 && !isCompilableSchema(s)) bad('it is not a valid JSON Schema');
  const c = inputContract(s);
  for (const [name, prop] of Object.entries(c.properties)) {
    const field = `inputSchema.properties.${name}`;
    if (!INPUT_NAME_PATTERN.test(name) || RESERVED_NAMES.has(name)) out.push({ code: 'input_name_invalid', field, params: { input: name } });
    if (!prop || typeof prop !== 'object' || Array.isArray(prop)) {
      bad(`property "${name}" must be a schema object`, field);
      continue;
    }
    const auto = prop['x-fengyu-auto'];
    if (auto !== undefined && auto !== SHARED_DIRECTORY) out.push({ code: 'input_auto_invalid', field, params: { input: name, value: auto } });
    if (prop['x-fengyu-enum'] !== undefined && !enumSourceOf(prop)) out.push({ code: 'input_enum_invalid', field, params: { input: name } });
  }
  for (const r of c.required) {
    if (!(r in c.properties)) out.push({ code: 'input_required_undeclared', field: 'inputSchema.required', params: { input: r } });
  }
  return out;
}

/** What `validateWorkflowDefinition` needs from the host. */
export interface DefinitionContext {
  // Workflow tools are judged by name: any `run_workflow_*` step is `workflow_nested_tool`.
  /** Looks a tool up in the owner's catalog (workflow tools need not be present). */
  tool: (name: string) => ToolInfo | undefined;
  /**
   * Drafts may keep steps whose tool exists but is currently unavailable (a disabled plugin);
   * publishing and running may not.
   */
  allowUnavailableTools?: boolean;
  /**
   * Drafts may also keep steps whose tool is not installed here at all (an imported workflow, a
   * plugin not installed yet): saved, refused at publish and run (`step_unknown_tool`).
   */
  allowMissingTools?: boolean;
  /** The owner's secret names (`secret_unknown` outside them); absent: names are not checked (a draft). */
  secretNames?: ReadonlySet<string>;
}

/**
 * The typed plan of a valid definition, or every problem found (definition paths, or
 * step-relative fields when `stepId` is set).
 */
export type DefinitionResult =
  | {
      /** The definition is valid. */
      ok: true;
      /** Its plan, typed. */
      plan: AgentPlan;
    }
  | {
      /** The definition is refused. */
      ok: false;
      /** Every problem found. */
      problems: Problem[];
    };

/**
 * Nested workflow tools are never allowed in a saved definition (no recursion): a step whose
 * tool is `run_workflow_*` is `workflow_nested_tool`, whatever the catalog holds.
 */
export function nestedWorkflowCheck(step: PlanStep): Problem[] {
  if (!isWorkflowToolName(step.tool)) return [];
  return [{ code: 'workflow_nested_tool', stepId: step.id, field: 'tool', params: { stepId: step.id, tool: step.tool } }];
}

/**
 * A goal may hold only `{{inputs.<name>}}` placeholders (`goal_ref_invalid` otherwise), each
 * naming a declared value input (`goal_ref_undeclared_input`); file inputs are not values.
 */
function goalProblems(plan: unknown, c: InputContract): Problem[] {
  const goal = (plan as { goal?: unknown } | undefined)?.goal;
  if (typeof goal !== 'string') return [];
  const out: Problem[] = [];
  for (const { token } of collectReferences(goal)) {
    if (!token.ok) out.push({ code: 'goal_ref_invalid', field: 'plan.goal', params: { ref: token.raw } });
    else if (token.ref.kind === 'secrets') continue; // secret_not_allowed_here, from validatePlan
    else if (token.ref.kind !== 'inputs') out.push({ code: 'goal_ref_invalid', field: 'plan.goal', params: { ref: token.ref.raw } });
    else if (!c.values.includes(token.ref.name)) out.push({ code: 'goal_ref_undeclared_input', field: 'plan.goal', params: { input: token.ref.name } });
  }
  return out;
}

/**
 * Every problem of a definition at once: draft shape, graph size, input schema, plan, nesting,
 * goal. A `{{inputs.<name>}}` naming a file input is `ref_file_input_as_value` (use
 * `@file:<name>`). Unavailable tools are tolerated only with `allowUnavailableTools`.
 * A problem with a `stepId` has its `field` relative to that step (as `validatePlan` reports it);
 * other fields are paths in the definition (`name`, `inputSchema.properties.x`, `plan.goal`, `plan.steps[3]`).
 */
export function validateWorkflowDefinition(def: unknown, ctx: DefinitionContext): DefinitionResult {
  const problems: Problem[] = [];
  const parsed = WorkflowDraftSchema.safeParse(def);
  if (!parsed.success) {
    for (const i of parsed.error.issues) problems.push(draftIssue(i));
  }
  const draft = (parsed.success ? parsed.data : def) as Partial<WorkflowDraft> | undefined;
  if (draft?.graph && byteSize(draft.graph) > MAX_GRAPH_BYTES) problems.push({ code: 'workflow_graph_too_large', field: 'graph', params: { limit: MAX_GRAPH_BYTES } });
  const schema = (draft?.inputSchema ?? { type: 'object', properties: {} }) as JsonSchema;
  problems.push(...inputSchemaProblems(schema));
  const c = inputContract(schema);
  const fileLike = new Set([...c.files, ...c.sharedDirectories]);
  const result = validatePlan(draft?.plan, {
    tool: (name) => ctx.tool(name) ?? (isWorkflowToolName(name) ? workflowToolStub(name) : undefined),
    inputNames: new Set(c.values),
    fileInputNames: fileLike,
    uploadInputNames: new Set(c.files),
    ...(ctx.secretNames ? { secretNames: ctx.secretNames } : {}),
    extraStepCheck: (step) => nestedWorkflowCheck(step),
  });
  if (!result.ok) {
    for (const p of result.problems) {
      if (p.code === 'step_unavailable_tool' && ctx.allowUnavailableTools) continue;
      if (p.code === 'step_unknown_tool' && ctx.allowMissingTools) continue;
      const input = p.params?.input;
      if (p.code === 'ref_undeclared_input' && typeof input === 'string' && fileLike.has(input)) problems.push({ ...p, code: 'ref_file_input_as_value' });
      else problems.push(p.stepId || !p.field ? p : { ...p, field: planField(p.field) });
    }
  }
  problems.push(...goalProblems(draft?.plan, c));
  if (problems.length > 0) return { ok: false, problems };
  // Only tolerated problems (unavailable tools in a draft) were found: the plan parses.
  return { ok: true, plan: result.ok ? result.plan : AgentPlanSchema.parse(draft?.plan) };
}

/** Plan-level fields (no step) are located under `plan`; step fields stay relative to their step. */
function planField(field: string): string {
  return field.startsWith('.') || field.startsWith('[') ? `plan${field}` : `plan.${field}`;
}

/** A draft-shape issue as a problem; the common ones get their own localized codes. */
function draftIssue(i: z.core.$ZodIssue): Problem {
  const path = i.path.map(String).join('.') || '(root)';
  const field = i.path[0];
  if ((field === 'name' || field === 'description') && i.path.length === 1) {
    if (i.code === 'too_big') return { code: `workflow_${field}_too_long`, field, params: { max: Number(i.maximum) } };
    if (field === 'name') return { code: 'workflow_name_required', field, params: {} };
  }
  return { code: 'workflow_field_invalid', field: path, params: { path, reason: zodIssueText(i) } };
}

/**
 * Stands in for a workflow tool missing from the catalog, so a nested workflow step is
 * reported once, as `workflow_nested_tool`, rather than also as an unknown tool.
 */
function workflowToolStub(name: string): ToolInfo {
  return { name, inputSchema: { type: 'object' }, effect: 'write', idempotent: false, source: 'workflow', available: true };
}

/** Size of a value as UTF-8 JSON, in bytes; infinite when it cannot be serialized. */
function byteSize(value: unknown): number {
  try {
    return new TextEncoder().encode(JSON.stringify(value) ?? '').length;
  } catch {
    return Number.POSITIVE_INFINITY;
  }
}
