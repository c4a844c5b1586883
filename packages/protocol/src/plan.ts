import { z } from 'zod';

/**
 * The AgentPlan: the one execution format shared by model-drafted plans, caller-supplied
 * workflows, edited plans on approval and compiled canvas graphs.
 */

export const STEP_ID_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
export const MAX_STEPS = 64;
export const MAX_ATTEMPTS = 5;

export const RetrySchema = z
  .object({
    /** Total attempts, the first one included: 1..5. */
    maxAttempts: z.number().int(),
    /** Delay before the second attempt; doubles for each further attempt. */
    initialBackoffMs: z.number().int().min(0).max(60_000).optional(),
  })
  .strict();

export const StepSchema = z
  .object({
    id: z.string().regex(STEP_ID_PATTERN, 'must match ^[A-Za-z][A-Za-z0-9_-]{0,63}$'),
    title: z.string().max(200).optional(),
    /** A catalog tool name; omitted for a model step. */
    tool: z.string().min(1).max(200).optional(),
    arguments: z.record(z.string(), z.unknown()).optional(),
    /** What a model step should do (required when `tool` is absent). */
    instruction: z.string().max(20_000).optional(),
    dependsOn: z.array(z.string()).optional(),
    requiresApproval: z.boolean().optional(),
    retry: RetrySchema.optional(),
    /** A pinned result is served without executing the tool (flow debugging). */
    pinned: z.object({ result: z.unknown() }).strict().optional(),
  })
  .strict();

export const AgentPlanSchema = z
  .object({
    goal: z.string().max(20_000).optional(),
    steps: z.array(StepSchema),
  })
  .strict();

export type Retry = z.infer<typeof RetrySchema>;
export type PlanStep = z.infer<typeof StepSchema>;
export type AgentPlan = z.infer<typeof AgentPlanSchema>;

/** JSON Schema of the AgentPlan, derived from the zod source (given to models while planning). */
export function agentPlanJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(AgentPlanSchema, { unrepresentable: 'any' }) as Record<string, unknown>;
}

export type PermissionMode = 'ask' | 'approve-for-me' | 'full-access';
export const PERMISSION_MODES: readonly PermissionMode[] = ['ask', 'approve-for-me', 'full-access'];

export const AgentConfigSchema = z
  .object({
    permissionMode: z.enum(['ask', 'approve-for-me', 'full-access']).optional(),
    planApproval: z.boolean().optional(),
    stepApproval: z.boolean().optional(),
    backend: z.string().max(100).optional(),
    model: z.string().max(200).optional(),
    capabilityMode: z.enum(['read-only']).optional(),
    /** Steps running at once within this run (1..16; default from host config). */
    maxConcurrency: z.number().int().min(1).max(16).optional(),
  })
  .strict();

export type AgentConfig = z.infer<typeof AgentConfigSchema>;

export type RunStatus =
  | 'planning'
  | 'awaiting_plan_approval'
  | 'running'
  | 'awaiting_step_approval'
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'interrupted';

export const TERMINAL_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'cancelled', 'interrupted'];

export function isTerminal(status: RunStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}
