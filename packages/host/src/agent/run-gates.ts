import { randomUUID } from 'node:crypto';
import { type AgentPlan, FengYuError, type RunStatus } from '@fengyu/protocol';
import type { NewEvent, Trx } from '../events/event-log';
import type { CatalogSnapshot } from '../tools/catalog';
import { isoTime } from '../clock';
import { type AlsoWrite, type GateOutcome, type GateRun, type InputRequest, inputAnswerText, type OpenGate } from './gates';
import { timeoutOutcome } from './input-step';
import type { GateTicket, RunInput } from './run-reducer';
import { redactPlan } from './run-text';
import type { ResolvedConfig, RunDeps, RunInit } from './run-types';
import type { RunRow } from './run.repository';

/**
 * The approval gates of one live run (split out of the run executor): the gate behind each of the
 * reducer's tickets, opening it (its event, the run row's gate and its inbox record in one
 * commit), a step's request for approval, and a step gate's answer or expiry. The queue itself is
 * the reducer's; the plan gate's answer (which may replace the plan) stays with the executor.
 */

export interface PendingGate {
  gate: OpenGate;
  resolve?: (o: GateOutcome) => void;
  /** Answered (or expired) and committed; the run may still wait for its slot before going on. */
  answered?: boolean;
}

/** What the gates need of their run. */
export interface GatedRun extends GateRun {
  readonly catalog: CatalogSnapshot;
  readonly config: ResolvedConfig;
  readonly deps: RunDeps;
  readonly init: Pick<RunInit, 'uncertain' | 'parking' | 'outerApproval' | 'answered'>;
  /** The reducer's gate queue (the first is the open one). */
  queuedGates(): readonly GateTicket[];
  commit(events: NewEvent[], patch?: Partial<RunRow>, more?: (trx: Trx) => Promise<void>): Promise<unknown>;
  dispatch(input: RunInput): void;
  setStatus(status: RunStatus): void;
  cancel(): Promise<void>;
}

export class RunGates {
  readonly pending = new Map<string, PendingGate>();

  constructor(private readonly run: GatedRun) {}

  async open(ticket: GateTicket): Promise<void> {
    const r = this.run;
    let entry = this.pending.get(ticket.key);
    if (!entry) {
      const uncertainSteps = r.init.uncertain ?? [];
      entry = { gate: { id: randomUUID(), kind: 'plan', reason: 'review the plan', ...(uncertainSteps.length ? { detail: { uncertainSteps } } : {}) } };
      this.pending.set(ticket.key, entry);
    }
    const gate = entry.gate;
    const recorder = r.deps.gates;
    // the inbox keeps and shows the plan as events do: a write-only argument as the marker
    const shown = { id: r.id, owner: r.owner, ...(r.goal !== undefined ? { goal: r.goal } : {}), ...(r.plan ? { plan: redactPlan(r.plan, r.catalog) } : {}) };
    const record = recorder ? (trx: Trx) => recorder.opened(shown, gate, trx) : undefined;
    try {
      if (gate.kind === 'plan') {
        r.setStatus('awaiting_plan_approval');
        await r.commit([{ type: 'plan_approval_requested', gateId: gate.id, plan: redactPlan(r.plan as AgentPlan, r.catalog), ...gate.detail }], { status: 'awaiting_plan_approval', gate: JSON.stringify(gate) }, record);
      } else if (gate.kind === 'input' && gate.input) {
        // the wait starts when the gate opens (it may have queued behind another)
        if (!gate.input.expiresAt) {
          const now = r.deps.clock.now();
          gate.input.openedAt = isoTime(now);
          gate.input.expiresAt = isoTime(now + gate.input.timeoutMs);
        }
        const { title, form, expiresAt } = gate.input;
        r.setStatus('awaiting_input');
        await r.commit([{ type: 'input_requested', gateId: gate.id, stepId: gate.stepId as string, title, form, expiresAt }], { status: 'awaiting_input', gate: JSON.stringify(gate) }, record);
      } else {
        r.setStatus('awaiting_step_approval');
        await r.commit([{ type: 'step_approval_requested', gateId: gate.id, stepId: gate.stepId as string, reason: gate.reason, ...gate.detail }], { status: 'awaiting_step_approval', gate: JSON.stringify(gate) }, record);
      }
    } catch {
      this.settle(ticket.key, { kind: 'cancelled' });
      r.dispatch({ type: 'gate_resolved', key: ticket.key, outcome: 'cancelled' });
      return;
    }
    recorder?.told({ added: gate.id });
    r.init.parking?.parked(r.id);
  }

  settle(key: string, outcome: GateOutcome): void {
    const entry = this.pending.get(key);
    this.pending.delete(key);
    entry?.resolve?.(outcome);
  }

  /** Cancels every pending gate (shutdown, a failed creation). */
  settleAll(): void {
    for (const key of [...this.pending.keys()]) this.settle(key, { kind: 'cancelled' });
  }

  /** Opens a step gate (or answers at once when this run may not pause). */
  async request(stepId: string, reason: string, detail: Record<string, unknown>): Promise<GateOutcome> {
    const r = this.run;
    if (r.config.noGates && r.config.preApproved) {
      await r.commit([{ type: 'audit', kind: 'gate_preapproved', stepId, reason: `${reason}; approved with the outer tool call` }]);
      return { kind: 'approved' };
    }
    const outer = r.init.outerApproval;
    if (r.config.noGates && outer) {
      const approved = await outer(reason, { tool: String(detail.tool ?? 'model'), arguments: detail.arguments, effect: String(detail.effect ?? 'model') });
      await r.commit([{ type: 'audit', kind: approved ? 'gate_outer_approved' : 'gate_outer_rejected', stepId, reason }]);
      return approved ? { kind: 'approved' } : { kind: 'rejected', reason: `rejected in the chat (${reason})` };
    }
    const answered = r.init.answered;
    if (answered?.stepId === stepId) {
      // its gate was answered while the run was parked (a host stop): that answer holds, once
      r.init.answered = undefined;
      return answered.outcome;
    }
    const key = randomUUID();
    return new Promise<GateOutcome>((resolve) => {
      this.pending.set(key, { gate: { id: key, kind: 'step', stepId, reason, detail }, resolve });
      r.dispatch({ type: 'gate_requested', ticket: { key, kind: 'step', stepId } });
    });
  }

  /** Opens an input step's gate; a gate answered while the run was parked (a host stop) holds, once. */
  requestInput(stepId: string, input: InputRequest): Promise<GateOutcome> {
    const answered = this.run.init.answered;
    if (answered?.stepId === stepId) {
      this.run.init.answered = undefined;
      return Promise.resolve(answered.outcome);
    }
    const key = randomUUID();
    return new Promise<GateOutcome>((resolve) => {
      this.pending.set(key, { gate: { id: key, kind: 'input', stepId, reason: 'input', input }, resolve });
      this.run.dispatch({ type: 'gate_requested', ticket: { key, kind: 'step', stepId } });
    });
  }

  /**
   * The open gate's entry, unless it has been answered (its run may wait for a slot to go on): an
   * approval (`no_pending_gate` when none, or an input, is open) or an input (`no_pending_input`).
   */
  openEntry(want: 'approval' | 'input' = 'approval'): { key: string; entry: PendingGate } {
    const key = this.run.queuedGates()[0]?.key;
    const entry = key ? this.pending.get(key) : undefined;
    if (!key || !entry || entry.answered || (entry.gate.kind === 'input') !== (want === 'input')) throw new FengYuError(want === 'input' ? 'no_pending_input' : 'no_pending_gate', { runId: this.run.id });
    return { key, entry };
  }

  /** The open gate's id (undefined when none is open or it has been answered). */
  openGateId(): string | undefined {
    const key = this.run.queuedGates()[0]?.key;
    const entry = key ? this.pending.get(key) : undefined;
    return entry && !entry.answered ? entry.gate.id : undefined;
  }

  /** Records the gate's end in the inbox, in the transaction of the answer (`raw`: the same as prepared statements). */
  settleRecord(gateId: string, outcome: 'answered' | 'expired'): AlsoWrite | undefined {
    const recorder = this.run.deps.gates;
    return recorder ? Object.assign((trx: Trx) => recorder.settled(gateId, outcome, trx), { raw: recorder.settledRaw?.(gateId, outcome) }) : undefined;
  }

  /** A step or input gate's answer (or expiry): committed with its inbox record; the run goes on once it holds a slot again. */
  async answerStep(key: string, entry: PendingGate, outcome: GateOutcome, how: 'answered' | 'expired'): Promise<void> {
    const r = this.run;
    const gate = entry.gate;
    entry.answered = true;
    const status: RunStatus = r.queuedGates().length > 1 ? 'awaiting_step_approval' : 'running';
    r.setStatus(status);
    const event: NewEvent =
      outcome.kind === 'values'
        ? { type: 'input_received', gateId: gate.id, stepId: gate.stepId as string, outcome: outcome.how }
        : outcome.kind === 'rejected'
        ? { type: 'audit', kind: how === 'expired' ? 'gate_expired' : 'step_rejected', stepId: gate.stepId, reason: outcome.reason }
        : { type: 'step_approved', gateId: gate.id, stepId: gate.stepId as string };
    try {
      // an input's values stay on the row until the step commits: a resume after a crash takes them
      const kept = outcome.kind === 'values' ? { input_answer: inputAnswerText(gate.stepId as string, outcome) } : {};
      await r.commit([event], { status, gate: null, ...kept }, this.settleRecord(gate.id, how));
    } catch (err) {
      entry.answered = false;
      throw err;
    }
    if (how === 'answered') r.deps.crashPoint?.('gate-answer');
    r.deps.gates?.told({ removed: gate.id, outcome: how });
    const go = () => {
      this.settle(key, outcome);
      r.dispatch({ type: 'gate_resolved', key, outcome: outcome.kind === 'values' ? 'approved' : outcome.kind });
    };
    const parking = r.init.parking;
    if (!parking) return go();
    void parking.resumed().then(go, go);
  }

  /**
   * Fails the open step gate `gateId` because nobody answered it in time (the inbox's expiry); an
   * expired plan gate cancels the run. False when that gate is no longer the open one.
   */
  async expire(gateId: string): Promise<boolean> {
    const r = this.run;
    const key = r.queuedGates()[0]?.key;
    const entry = key ? this.pending.get(key) : undefined;
    if (!key || !entry || entry.answered || entry.gate.id !== gateId) return false;
    if (entry.gate.kind === 'plan') {
      if (r.deps.gates) await r.commit([{ type: 'audit', kind: 'gate_expired', gateId }], undefined, this.settleRecord(gateId, 'expired'));
      r.deps.gates?.told({ removed: gateId, outcome: 'expired' });
      await r.cancel();
      return true;
    }
    const outcome: GateOutcome = entry.gate.kind === 'input' ? timeoutOutcome(entry.gate) : { kind: 'rejected', reason: `gate_expired: nobody answered the approval of step "${entry.gate.stepId}" in time` };
    await this.answerStep(key, entry, outcome, 'expired');
    return true;
  }
}
