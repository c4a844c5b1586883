import { type AgentPlan, FengYuError } from '@fengyu/protocol';
import type { PlanRequest } from './contracts';
import { planRowText, problemLines, redactPlan } from './run-text';
import type { StepHost } from './run-types';

/**
 * Drafts a run's plan from its goal: streams the model's tokens as `plan_token` events, validates
 * the draft (one repair round with the problems), and announces the plan once (`plan_ready`).
 * Returns undefined when the run ended meanwhile (nothing is announced then).
 */
export async function draftPlan(run: StepHost & { goal?: string }, ended: () => boolean): Promise<AgentPlan | undefined> {
  const planner = run.deps.planner;
  if (!planner) throw new FengYuError('no_chat_backend');
  let tokens: Promise<void> = Promise.resolve();
  const req: PlanRequest = {
    owner: run.owner,
    goal: run.goal ?? '',
    backend: run.config.backend,
    model: run.config.model,
    catalog: run.catalog,
    inputs: run.inputs,
    signal: run.signal,
    onToken: (text: string) => {
      tokens = tokens.then(() => run.commit([{ type: 'plan_token', text }]).then(() => undefined));
    },
  };
  let draft = await planner.draft(req);
  await tokens;
  let plan: AgentPlan;
  try {
    plan = run.deps.validate(draft, run);
  } catch (err) {
    draft = await planner.repair(req, draft, problemLines(err));
    await tokens;
    plan = run.deps.validate(draft, run);
  }
  if (ended()) return undefined;
  const status = run.config.planApproval ? {} : { status: 'running' as const };
  await run.commit([{ type: 'plan_ready', plan: redactPlan(plan, run.catalog) }], { plan: planRowText(plan, run.catalog), ...status });
  return plan;
}
