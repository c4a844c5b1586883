import type { AgentPlan, PlanStep, StepExecution, ToolEffect } from '@fengyu/protocol';

/**
 * What a rewind cannot undo, pure: the steps a rewind to `keep` drops whose tool had a write,
 * external or command effect and already ran (`done`, or `uncertain`: the host stopped while it
 * ran). Their e-mails are sent and their files written; the rewound run only stops remembering
 * them. A forEach's body steps count for the forEach they belong to. A tool the catalog no
 * longer lists is assumed to have had an effect (`effect: "unknown"`): a warning too many beats
 * one missing.
 */

export type AppliedEffect = Exclude<ToolEffect, 'read'> | 'unknown';

export interface AlreadyApplied {
  /** The dropped top-level step (a forEach for its body steps). */
  stepId: string;
  title?: string;
  /** The step that ran the tool: the step itself, or a step of the forEach's body. */
  ranStepId: string;
  tool: string;
  effect: AppliedEffect;
  /** `uncertain` when at least one execution may or may not have taken effect. */
  status: 'done' | 'uncertain';
  /** How many executions (forEach iterations) already ran. */
  executions: number;
}

export interface RewindPreview {
  keepSteps: number;
  kept: string[];
  dropped: string[];
  alreadyApplied: AlreadyApplied[];
}

export function rewindPreview(plan: AgentPlan, keep: number, executions: readonly StepExecution[], effectOf: (tool: string) => ToolEffect | undefined): RewindPreview {
  const dropped = plan.steps.slice(keep);
  const ran = new Map<string, StepExecution[]>();
  for (const e of executions) if (e.status === 'done' || e.status === 'uncertain') ran.set(e.stepId, [...(ran.get(e.stepId) ?? []), e]);
  const alreadyApplied: AlreadyApplied[] = [];
  for (const top of dropped) {
    for (const step of [top, ...(top.steps ?? [])] as PlanStep[]) {
      const runs = ran.get(step.id);
      if (!step.tool || !runs?.length) continue;
      const known = effectOf(step.tool);
      if (known === 'read') continue;
      alreadyApplied.push({
        stepId: top.id,
        ...(top.title ? { title: top.title } : {}),
        ranStepId: step.id,
        tool: step.tool,
        effect: known ?? 'unknown',
        status: runs.some((r) => r.status === 'uncertain') ? 'uncertain' : 'done',
        executions: runs.length,
      });
    }
  }
  return { keepSteps: keep, kept: plan.steps.slice(0, keep).map((s) => s.id), dropped: dropped.map((s) => s.id), alreadyApplied };
}
