import { z } from 'zod';
import { CaseSchema, JOIN_MODES, STEP_KINDS } from './control-flow';

/**
 * The AgentPlan: the one execution format shared by model-drafted plans, caller-supplied
 * workflows, edited plans on approval and compiled canvas graphs.
 */

/**
 * The rule every step id follows: a letter, then up to 63 letters, digits, `_` or `-`
 * (1..64 characters). Ids are unique within a plan and are what `dependsOn` and
 * `{{node.<id>.result}}` name.
 */
export const STEP_ID_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
/**
 * The most steps one plan may hold: at most 64. A longer plan is refused with
 * `plan_too_many_steps`; an empty plan with `plan_empty`.
 */
export const MAX_STEPS = 64;
/**
 * The upper bound of `retry.maxAttempts`: at most 5 attempts per step, the first included.
 * A value outside 1..5 is refused with `retry_range`.
 */
export const MAX_ATTEMPTS = 5;

/** What a failed step does to its run (see `StepSchema.onError`). */
export const ON_ERROR_MODES = ['fail', 'continue', 'branch'] as const;
/** A step's failure mode: `fail` (default), `continue` or `branch`. */
export type OnError = (typeof ON_ERROR_MODES)[number];
/**
 * The bounds of a step's `timeoutMs`, 1 s..1 h; a value outside them is refused with
 * `step_timeout_range`. (An input step's own `timeoutMs`, how long it waits for a person, has
 * other bounds.)
 */
export const STEP_TIMEOUT_MS = { min: 1000, max: 3_600_000 } as const;

/**
 * A step's retry policy. More than one attempt is allowed only for a retry-safe tool (a read
 * tool, or a plugin tool declared idempotent) and never on a pinned step; a model step never
 * retries. The range 1..`MAX_ATTEMPTS` is checked by plan validation, not by this schema.
 */
export const RetrySchema = z
  .object({
    /**
     * Total attempts, the first one included: an integer in 1..`MAX_ATTEMPTS` (5). A failed
     * attempt is retried while attempts remain and the run is not cancelled; each retry
     * emits `step_retry`.
     */
    maxAttempts: z.number().int(),
    /**
     * Delay before the second attempt, in milliseconds (integer, 0..60000); doubles for each
     * further attempt. Optional.
     */
    initialBackoffMs: z.number().int().min(0).max(60_000).optional(),
  })
  .strict();

/**
 * One step of a plan. Its `kind` (see `stepKind`) says what it does: a tool step (`tool` names
 * a catalog tool, called with `arguments`), a model step (no `tool`; the model carries out
 * `instruction`), a condition (`cases`; picks a branch), a forEach (`items` and a body of
 * `steps`) or an input (`form`; waits for a person's values). Unknown keys are refused; which fields each kind takes is a rule of `validatePlan`.
 */
export const StepSchema = z
  .object({
    /**
     * The step id, unique within the plan (`step_duplicate_id`); matches `STEP_ID_PATTERN`.
     * Events, gates and references name the step by it.
     */
    id: z.string().regex(STEP_ID_PATTERN, 'must match ^[A-Za-z][A-Za-z0-9_-]{0,63}$'),
    /** A short human label for the step, at most 200 characters. Optional. */
    title: z.string().max(200).optional(),
    /**
     * What the step does: `tool`, `model`, `condition`, `forEach` or `input`. Optional: the
     * default is `tool` when `tool` is set, else `model`.
     */
    kind: z.enum(STEP_KINDS).optional(),
    /**
     * A catalog tool name (1..200 characters); omitted for a model step. The tool must exist in
     * the catalog the plan runs against (`step_unknown_tool`) and be available
     * (`step_unavailable_tool`).
     */
    tool: z.string().min(1).max(200).optional(),
    /**
     * The tool's input: a JSON object checked against the tool's input schema. String values
     * may hold references (`{{steps.N.result}}`, `{{node.<id>.result}}`, `{{last.result}}`,
     * `{{inputs.<name>}}`) and `@file:<input>`; values that are exactly one placeholder or a
     * FileRef object are checked only at dispatch.
     */
    arguments: z.record(z.string(), z.unknown()).optional(),
    /**
     * What a model step should do, at most 20000 characters; required and non-blank when
     * `tool` is absent (`step_missing_instruction`). May hold references.
     */
    instruction: z.string().max(20_000).optional(),
    /**
     * Ids of the steps that must finish before this one starts. Each must name another step
     * of the plan (`step_unknown_dependency`, `step_self_dependency`) and the graph must be
     * acyclic (`plan_cycle`). A step may reference only results of its (transitive)
     * prerequisites.
     */
    dependsOn: z.array(z.string().max(200)).optional(),
    /**
     * How the dependencies combine: `all` (default) runs when every one is satisfied and is
     * skipped as soon as one is skipped; `any` runs once all are settled and at least one is
     * satisfied, and is skipped when all are skipped. A dependency may name a port:
     * `"check:big"`, `"check:else"`.
     */
    join: z.enum(JOIN_MODES).optional(),
    /**
     * A condition's cases, 1..20, tried in order: the first whose `when` holds is the branch
     * taken (`else` when none holds). With `instruction` the model picks a case by its
     * `description`. The step's result is `{"branch": "<name>"}`.
     */
    cases: z.array(CaseSchema).optional(),
    /**
     * A forEach's list: a string that is exactly one reference to an array, or a literal array.
     * Inside the body `{{item}}` is the current element and `{{index}}` its 0-based position.
     */
    items: z.unknown().optional(),
    /** forEach: iterations in flight at once, 1..8; default 1. */
    concurrency: z.number().int().optional(),
    /** forEach: the most items accepted (more fails the step before any iteration), 1..10000; default 1000. */
    maxItems: z.number().int().optional(),
    /**
     * A forEach's body: 1..32 steps run once per item, ids unique across the whole plan. Body
     * steps depend on each other only; they may reference the loop's prerequisites. A body holds
     * no forEach.
     */
    get steps(): z.ZodOptional<z.ZodArray<typeof StepSchema>> {
      return z.array(StepSchema).optional();
    },
    /**
     * An input step's form: a JSON Schema of `type: "object"` with 1..30 fields (see
     * `input-form.ts`); the step's result is the values a person sends.
     */
    form: z.record(z.string(), z.unknown()).optional(),
    /** An input step: on timeout, `fail` (default: the step fails `gate_expired`) or `default` (it completes with `defaults`). */
    onTimeout: z.string().max(32).optional(),
    /** An input step's values when it times out with `onTimeout: "default"`; they must satisfy the form. */
    defaults: z.record(z.string(), z.unknown()).optional(),
    /**
     * When true the run pauses for a person's approval before this step runs, in every
     * permission mode except `full-access`. Default false.
     */
    requiresApproval: z.boolean().optional(),
    /** The retry policy; omitted means one attempt. */
    retry: RetrySchema.optional(),
    /**
     * What the step's failure does: `fail` (default) fails the run; `continue` lets the run go on
     * (dependents run, the step's result is null and `{{node.<id>.error}}` is `{code, message}`);
     * `branch` offers the ports `<id>:ok` and `<id>:error` to `dependsOn` (the side not taken is
     * skipped). A run whose only failures were continued or branched completes, listing them in
     * `failedSteps`.
     */
    onError: z.enum(ON_ERROR_MODES).optional(),
    /**
     * How long one attempt may take, in milliseconds (integer, 1000..3600000): on expiry the
     * attempt is aborted (a command's process group, a worker's call, an MCP or model call) and
     * fails with `step_timeout`; `retry` then applies. Omitted: the tool's own timeout. On an
     * input step: how long it waits for a person, 60000..2592000000 (default 7 days).
     */
    timeoutMs: z.number().int().optional(),
    /**
     * A pinned result is served without executing the tool (flow debugging). A pinned step
     * cannot retry, and its arguments are not checked against the tool's schema.
     */
    pinned: z
      .object({
        /** The result served as the step's. */
        result: z.unknown(),
      })
      .strict()
      .optional(),
  })
  .strict();

/**
 * The plan itself: an optional goal and its steps. Unknown keys are refused. The schema checks
 * shape only; `validatePlan` adds the count (1..`MAX_STEPS`) and every cross-step rule.
 */
export const AgentPlanSchema = z
  .object({
    /** What the plan is for, in the user's words; at most 20000 characters. Optional. */
    goal: z.string().max(20_000).optional(),
    /** The steps in plan order (the order `{{steps.N.result}}` counts, 1-based). */
    steps: z.array(StepSchema),
  })
  .strict();

/** A step's retry policy (see `RetrySchema`). */
export type Retry = z.infer<typeof RetrySchema>;
/** One plan step (see `StepSchema`). */
export type PlanStep = z.infer<typeof StepSchema>;
/** A plan that passed the shape check (see `AgentPlanSchema`). */
export type AgentPlan = z.infer<typeof AgentPlanSchema>;

/**
 * JSON Schema of the AgentPlan, derived from the zod source (given to models while planning).
 * It carries the shape only; the rules of `validatePlan` are checked after the draft.
 */
export function agentPlanJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(AgentPlanSchema, { unrepresentable: 'any' }) as Record<string, unknown>;
}

/**
 * How much a run may do without asking:
 * - `ask` (the default): write, external and command tools pause for approval;
 * - `approve-for-me`: tool calls are allowed unless a rule says otherwise;
 * - `full-access`: as `approve-for-me`, and `requiresApproval` steps do not pause.
 */
export type PermissionMode = 'ask' | 'approve-for-me' | 'full-access';
/** Every permission mode, for input checks and pickers. */
export const PERMISSION_MODES: readonly PermissionMode[] = ['ask', 'approve-for-me', 'full-access'];

/**
 * The lower of two modes (`ask` < `approve-for-me` < `full-access`): a schedule, trigger or task
 * a tool creates never gets a mode above the calling run's or chat's (`ceiling`).
 */
export function capPermissionMode(requested: PermissionMode, ceiling: PermissionMode): PermissionMode {
  return PERMISSION_MODES.indexOf(requested) <= PERMISSION_MODES.indexOf(ceiling) ? requested : ceiling;
}

/**
 * Per-run settings a caller may pass with a run. Every field is optional; omitted fields take
 * the host's defaults. Unknown keys are refused.
 */
export const AgentConfigSchema = z
  .object({
    /** The run's permission mode; default `ask`. */
    permissionMode: z.enum(['ask', 'approve-for-me', 'full-access']).optional(),
    /** When true (the default) the run pauses for plan review before the first step. */
    planApproval: z.boolean().optional(),
    /** When true every step pauses for approval before it runs; default false. */
    stepApproval: z.boolean().optional(),
    /** The model backend to use, by name (at most 100 characters); default from host config. */
    backend: z.string().max(100).optional(),
    /** The model id within the backend (at most 200 characters); default from host config. */
    model: z.string().max(200).optional(),
    /** `read-only`: every step must use a read tool (`read_only_step`); model steps are refused. */
    capabilityMode: z.enum(['read-only']).optional(),
    /**
     * Steps running at once within this run: an integer in 1..16; default from host config.
     * Only steps whose dependencies are done can run together.
     */
    maxConcurrency: z.number().int().min(1).max(16).optional(),
  })
  .strict();

/** Per-run settings (see `AgentConfigSchema`). */
export type AgentConfig = z.infer<typeof AgentConfigSchema>;

/**
 * A run's lifecycle state. A run starts in `planning` (or `running` for a supplied plan),
 * may pause at `awaiting_plan_approval` / `awaiting_step_approval` / `awaiting_input` (an input
 * step waits for a person's values), and ends in one of
 * `TERMINAL_STATUSES`. `interrupted` means the host stopped while the run was live.
 */
export type RunStatus =
  | 'planning'
  | 'awaiting_plan_approval'
  | 'running'
  | 'awaiting_step_approval'
  | 'awaiting_input'
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'interrupted';

/** Every run status, in lifecycle order. */
export const RUN_STATUSES: readonly RunStatus[] = ['planning', 'awaiting_plan_approval', 'running', 'awaiting_step_approval', 'awaiting_input', 'completed', 'failed', 'cancelled', 'interrupted'];

/** The statuses at which a run stops; only a resume moves a failed, cancelled or interrupted run on. */
export const TERMINAL_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'cancelled', 'interrupted'];

/** True when `status` is one of `TERMINAL_STATUSES`. */
export function isTerminal(status: RunStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}
