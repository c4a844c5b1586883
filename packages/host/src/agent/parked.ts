import { planRejectedSummary } from './run-finish';
import { type AgentPlan, FengYuError, type RunStatus } from '@fengyu/protocol';
import { isoTime, type Clock } from '../clock';
import type { EventLog, NewEvent } from '../events/event-log';
import { type GateOutcome, type GateRecorder, inputAnswerText, type OpenGate } from './gates';
import { timeoutOutcome } from './input-step';
import type { RunRepository, RunRow, StepExecution } from './run.repository';

/**
 * Runs parked by a host stop while a gate waited.
 * A run whose status is awaiting a plan or step approval or an input, with its gate recorded and no step
 * running, is not interrupted when its host stops: it stays waiting, and its inbox item stays
 * pending (expiry included). Answering it — in the inbox, on the run page, or its expiry — commits
 * the answer with the item's settlement, then the run continues in place: done steps are reused
 * and the answered gate is not asked again.
 */

const AWAITING: readonly RunStatus[] = ['awaiting_step_approval', 'awaiting_plan_approval', 'awaiting_input'];

/** True when the row is a run parked at a gate (its gate is the one `gateOf` returns). */
export function isParkable(row: RunRow, steps: readonly StepExecution[]): boolean {
  return AWAITING.includes(row.status) && row.gate !== null && !steps.some((s) => s.status === 'running');
}

export function gateOf(row: RunRow): OpenGate | undefined {
  return row.gate ? (JSON.parse(row.gate) as OpenGate) : undefined;
}

/** How a parked run's gate was answered. */
export type ParkedAnswer = { kind: 'approve'; plan?: AgentPlan; edited?: boolean } | { kind: 'reject'; reason: string } | { kind: 'expire' } | { kind: 'values'; values: Record<string, unknown> };

/** An approve body (already checked by classifyApproveBody) as a parked gate's answer; an edited plan is validated. */
export async function parkedAnswerOf(body: unknown, gate: OpenGate, validate: (plan: unknown) => Promise<AgentPlan>): Promise<ParkedAnswer> {
  const obj = (body ?? {}) as { decision?: string; reason?: unknown; steps?: unknown };
  if (obj.decision === 'reject') return { kind: 'reject', reason: typeof obj.reason === 'string' ? obj.reason : 'rejected by the user' };
  if (obj.steps === undefined) return { kind: 'approve' };
  if (gate.kind !== 'plan') throw new FengYuError('invalid_request', { reason: 'an edited plan can only be sent to a plan approval gate' });
  return { kind: 'approve', plan: await validate(body), edited: true };
}

export interface ParkedDeps {
  events: EventLog;
  repo: RunRepository;
  clock: Clock;
  gates?: GateRecorder;
}

/**
 * Commits the answer of a parked run's gate with its inbox settlement. Returns what the run does
 * next: `continue` (with the outcome its step's gate gets, or the approved plan), or `ended`
 * (a rejected or expired plan review cancels the run).
 */
export async function answerParked(deps: ParkedDeps, row: RunRow, gate: OpenGate, answer: ParkedAnswer, planText: (plan: AgentPlan) => string = JSON.stringify): Promise<{ kind: 'ended' } | { kind: 'continue'; step?: { stepId: string; outcome: GateOutcome }; plan?: AgentPlan }> {
  const now = isoTime(deps.clock.now());
  const how = answer.kind === 'expire' ? 'expired' : 'answered';
  const settle = async (trx: Parameters<NonNullable<ParkedDeps['gates']>['settled']>[2]) => {
    if (deps.gates) await deps.gates.settled(gate.id, how, trx);
  };
  if (gate.kind === 'plan' && answer.kind !== 'approve') {
    const events: NewEvent[] = [{ type: 'audit', kind: answer.kind === 'expire' ? 'gate_expired' : 'plan_rejected', gateId: gate.id, ...(answer.kind === 'reject' ? { reason: answer.reason } : {}) }, { type: 'cancelled' }];
    await deps.events.commit(row.id, events, async (trx) => {
      const summary = answer.kind === 'reject' ? { summary: planRejectedSummary(answer.reason) } : {};
      if (!(await deps.repo.claimParked(row, { status: 'cancelled', gate: null, finished_at: now, updated_at: now, ...summary }, trx))) throw new FengYuError('no_pending_gate', { runId: row.id });
      await settle(trx);
    });
    deps.gates?.told({ removed: gate.id, outcome: how });
    return { kind: 'ended' };
  }
  let events: NewEvent[];
  let step: { stepId: string; outcome: GateOutcome } | undefined;
  let plan: AgentPlan | undefined;
  if (gate.kind === 'plan') {
    plan = (answer as { plan?: AgentPlan }).plan;
    events = [{ type: 'plan_approved', gateId: gate.id, edited: (answer as { edited?: boolean }).edited === true, plan: plan as AgentPlan }];
  } else if (gate.kind === 'input') {
    // an input: its values, or on expiry its defaults or gate_expired
    const outcome: GateOutcome = answer.kind === 'values' ? { kind: 'values', values: answer.values, how: 'answered' } : timeoutOutcome(gate);
    step = { stepId: gate.stepId as string, outcome };
    events = [outcome.kind === 'values' ? { type: 'input_received', gateId: gate.id, stepId: gate.stepId as string, outcome: outcome.how } : { type: 'audit', kind: 'gate_expired', stepId: gate.stepId, reason: (outcome as { reason: string }).reason }];
  } else if (answer.kind === 'approve') {
    step = { stepId: gate.stepId as string, outcome: { kind: 'approved' } };
    events = [{ type: 'step_approved', gateId: gate.id, stepId: gate.stepId as string }];
  } else {
    const reason = answer.kind === 'reject' ? answer.reason : `gate_expired: nobody answered the approval of step "${gate.stepId}" in time`;
    step = { stepId: gate.stepId as string, outcome: { kind: 'rejected', reason } };
    events = [{ type: 'audit', kind: answer.kind === 'expire' ? 'gate_expired' : 'step_rejected', stepId: gate.stepId, reason }];
  }
  await deps.events.commit(row.id, events, async (trx) => {
    // an input's values stay on the row until the step commits: a resume after a crash takes them
    const kept = step?.outcome.kind === 'values' ? { input_answer: inputAnswerText(step.stepId, step.outcome) } : {};
    const patch = { status: 'running' as const, gate: null, updated_at: now, ...(plan ? { plan: planText(plan) } : {}), ...kept };
    // the claim: only while the run still waits at this gate (another host's answer may have taken it)
    if (!(await deps.repo.claimParked(row, patch, trx))) throw new FengYuError('no_pending_gate', { runId: row.id });
    await settle(trx);
  });
  deps.gates?.told({ removed: gate.id, outcome: how });
  return { kind: 'continue', ...(step ? { step } : {}), ...(plan ? { plan } : {}) };
}

/**
 * Cancels a parked run: its gate is settled `cancelled` (its inbox item goes) and the run ends
 * `cancelled`, in one commit that claims it only while it still waits at that gate. False when
 * another host's answer or cancel took it first.
 */
export async function cancelParked(deps: ParkedDeps, row: RunRow, gate: OpenGate): Promise<boolean> {
  const now = isoTime(deps.clock.now());
  let claimed = false;
  await deps.events.commit(row.id, [{ type: 'cancel_requested' }, { type: 'cancelled' }], async (trx) => {
    claimed = await deps.repo.claimParked(row, { status: 'cancelled', gate: null, finished_at: now, updated_at: now }, trx);
    if (!claimed) throw new FengYuError('no_pending_gate', { runId: row.id });
    if (deps.gates) await deps.gates.settled(gate.id, 'cancelled', trx);
  }).catch((err) => {
    if (!claimed && (err as FengYuError).code === 'no_pending_gate') return;
    throw err;
  });
  if (claimed) deps.gates?.told({ removed: gate.id, outcome: 'cancelled' });
  return claimed;
}
