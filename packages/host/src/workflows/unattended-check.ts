import { type AgentPlan, errorSpecOf, FengYuError, type PermissionMode, type PlanStep, type Problem, registerErrors, type ToolEffect } from '@fengyu/protocol';
import { modeDefault } from '../permissions/mode-default';
import type { CallFacts } from '../permissions/rules';
import type { GuardDecision, PermissionGuard } from '../permissions/types';
import type { Tool } from '../tools/tool';

/**
 * Whether a run nobody watches (a schedule fire, a webhook delivery) could stop at an approval
 * gate. Only the `ask` mode is checked: `approve-for-me` and `full-access` are chosen
 * deliberately by whoever creates the schedule or trigger.
 *
 * Under `ask`, a step is gated when the permission guard (the owner's saved deny/ask/allow
 * rules, then the mode default) would answer `ask` for it:
 * - a tool step is judged with its literal arguments; an argument whose value is filled at run
 *   time (`{{…}}`) is unknown, so it is left out (a command or URL rule can then not cover it);
 * - a model step (an instruction, no tool) may call any available tool of the owner's catalog,
 *   so it is gated when one of them would ask when called with unknown arguments;
 * - a step marked `requiresApproval` is gated;
 * - a step the rules deny is not gated: it fails at run time, no approval is involved.
 */

export type UnattendedErrorCode = 'schedule_needs_unattended_mode' | 'trigger_needs_unattended_mode';

registerErrors({
  schedule_needs_unattended_mode: errorSpecOf(400),
  trigger_needs_unattended_mode: errorSpecOf(400),
});

/** What the check needs from a tool: the facts rules match on. */
export type ToolFacts = Pick<Tool, 'name' | 'effect' | 'source' | 'origin'> & { available?: boolean };

export interface UnattendedCheckInput {
  owner: string;
  /** The plan that will run unattended (the workflow's published version). */
  plan: AgentPlan;
  permissionMode: PermissionMode;
  /** The owner's tools as a run would see them (workflow tools excluded). */
  tools: readonly ToolFacts[];
  /** The permission guard; its dry run applies the owner's saved rules. */
  guard: Pick<PermissionGuard, 'dryRun'>;
}

/** One step that would wait for an approval, as a localizable problem. */
export interface GatedStep extends Problem {
  stepId: string;
  params: { stepId: string; tool?: string; effect?: ToolEffect; reason?: string };
}

/** The steps of the plan that could stop at an approval gate in an unattended run. */
export async function gatedSteps(input: UnattendedCheckInput): Promise<GatedStep[]> {
  if (input.permissionMode !== 'ask') return [];
  const byName = new Map(input.tools.map((t) => [t.name, t]));
  const out: GatedStep[] = [];
  for (const step of input.plan.steps) {
    const gated = await stepGate(input, step, byName);
    if (gated) out.push(gated);
  }
  return out;
}

/** Throws `code` (400) listing the gated steps, when there is one. */
export async function assertUnattendedRunnable(input: UnattendedCheckInput, code: UnattendedErrorCode): Promise<void> {
  const gated = await gatedSteps(input);
  if (gated.length === 0) return;
  const steps = gated.map((g) => `"${g.stepId}"`).join(', ');
  throw new FengYuError(code, { steps, field: 'permissionMode' }, gated);
}

async function stepGate(input: UnattendedCheckInput, step: PlanStep, tools: Map<string, ToolFacts>): Promise<GatedStep | undefined> {
  if (step.requiresApproval) return { code: 'unattended_step_requires_approval', stepId: step.id, field: 'permissionMode', params: { stepId: step.id } };
  if (step.pinned) return undefined;
  if (step.tool) {
    const tool = tools.get(step.tool);
    // An unknown tool fails the run before any step starts; no approval is involved.
    if (!tool) return undefined;
    const d = await decision(input, tool, knownArguments(step.arguments ?? {}));
    if (d.decision !== 'ask') return undefined;
    return { code: 'unattended_step_gated', stepId: step.id, field: 'permissionMode', params: { stepId: step.id, tool: tool.name, effect: tool.effect, reason: d.reason } };
  }
  for (const tool of input.tools) {
    if (tool.available === false) continue;
    const d = await decision(input, tool, {});
    if (d.decision !== 'ask') continue;
    return { code: 'unattended_model_step_gated', stepId: step.id, field: 'permissionMode', params: { stepId: step.id, tool: tool.name, effect: tool.effect, reason: d.reason } };
  }
  return undefined;
}

async function decision(input: UnattendedCheckInput, tool: ToolFacts, args: Record<string, unknown>): Promise<GuardDecision> {
  const call: CallFacts = { name: tool.name, effect: tool.effect, source: tool.source, ...(tool.origin ? { origin: tool.origin } : {}), arguments: args };
  if (input.guard.dryRun) return input.guard.dryRun({ owner: input.owner, call, permissionMode: input.permissionMode });
  // A guard without a dry run has no rules: the mode default decides.
  return modeDefault(input.permissionMode, tool.effect);
}

/** The arguments whose values are known before the run: those without a `{{…}}` reference. */
function knownArguments(args: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    if (!hasReference(value)) out[key] = value;
  }
  return out;
}

function hasReference(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('{{');
  if (Array.isArray(value)) return value.some(hasReference);
  if (value && typeof value === 'object') return Object.values(value).some(hasReference);
  return false;
}
