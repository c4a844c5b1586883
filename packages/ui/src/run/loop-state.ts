import type { AgentPlan } from '@fengyu/protocol';

/**
 * forEach progress as a pure fold over a run's events: events of body steps carry
 * `iteration` (the item's 0-based index) and `parentStepId` (the loop). An iteration is settled
 * once every body step has ended (done, failed or skipped); its result is the result of the
 * body's last step (plan order), as in the loop's own result.
 */

/** One iteration of a loop. */
export interface IterationView {
  index: number;
  /** `running` until every body step ended; then `failed` if one failed, `skipped` if all were skipped, else `done`. */
  status: 'running' | 'done' | 'failed' | 'skipped';
  /** Each body step's status in this iteration. */
  steps: Record<string, 'running' | 'done' | 'failed' | 'skipped'>;
  result?: unknown;
  hasResult: boolean;
  error?: string;
}

/** One loop's progress. */
export interface LoopView {
  /** How many items the loop runs over, once known. */
  total?: number;
  /** Settled iterations. */
  done: number;
  /** Iterations seen so far, by index. */
  iterations: Record<number, IterationView>;
}

/** The body step ids of loop `loopId`, in plan order. */
function bodyOf(plan: AgentPlan | undefined, loopId: string): string[] {
  return (plan?.steps.find((s) => s.id === loopId)?.steps ?? []).map((s) => s.id);
}

/** The number of items a loop's own event announces (`total`, or an `items` array in its arguments), if any. */
export function announcedTotal(e: Record<string, unknown>): number | undefined {
  if (typeof e.total === 'number') return e.total;
  const args = e.arguments as { items?: unknown } | undefined;
  if (Array.isArray(args?.items)) return args.items.length;
  if (e.type === 'step_complete' && e.status === 'done' && Array.isArray(e.result)) return e.result.length;
  return undefined;
}

/** The loops after one body-step event (`step_start` / `step_complete` with `iteration` and `parentStepId`). */
export function applyBodyEvent(loops: Readonly<Record<string, LoopView>>, plan: AgentPlan | undefined, e: Record<string, unknown>): Record<string, LoopView> {
  const loopId = String(e.parentStepId);
  const index = Number(e.iteration);
  const stepId = String(e.stepId);
  const loop = loops[loopId] ?? { done: 0, iterations: {} };
  const was = loop.iterations[index] ?? { index, status: 'running' as const, steps: {}, hasResult: false };
  const status = e.type === 'step_start' ? 'running' : (['done', 'failed', 'skipped'].includes(String(e.status)) ? e.status : 'done') as IterationView['status'];
  const it: IterationView = { ...was, steps: { ...was.steps, [stepId]: status } };
  const body = bodyOf(plan, loopId);
  if (e.type === 'step_complete' && stepId === body[body.length - 1] && status === 'done') Object.assign(it, { result: e.result, hasResult: e.result !== undefined });
  if (typeof e.error === 'string') it.error = e.error;
  const states = body.map((id) => it.steps[id]);
  const settled = body.length > 0 && states.every((s) => s !== undefined && s !== 'running');
  it.status = !settled ? 'running' : states.includes('failed') ? 'failed' : states.every((s) => s === 'skipped') ? 'skipped' : 'done';
  const newlySettled = it.status !== 'running' && was.status === 'running' ? 1 : 0;
  return { ...loops, [loopId]: { ...loop, done: loop.done + newlySettled, iterations: { ...loop.iterations, [index]: it } } };
}

/** The loops after the loop's own event announced its size. */
export function withTotal(loops: Readonly<Record<string, LoopView>>, loopId: string, total: number): Record<string, LoopView> {
  const loop = loops[loopId] ?? { done: 0, iterations: {} };
  return { ...loops, [loopId]: { ...loop, total } };
}
