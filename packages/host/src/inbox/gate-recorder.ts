import { APPROVAL_GATE_TTL_MS, type InboxItem, type InboxOutcome, inboxTrigger, isUnattended } from '@fengyu/protocol';
import type Database from 'better-sqlite3';
import type { Logger } from 'pino';
import { isoTime, type Clock } from '../clock';
import type { GateRecorder, GateRun, OpenGate } from '../agent/gates';
import type { Trx } from '../events/event-log';
import type { InboxRepository } from './inbox.repository';
import { rowOf } from './inbox.repository';

/**
 * The inbox side of every gate a run opens: the item is written in the transaction of the gate's
 * `*_requested` event and settled in the transaction of its answer, expiry or cancel; listeners
 * (the stream, e-mail, the expiry timer) hear of it only after that commit.
 */

export type InboxChange = { kind: 'added'; owner: string; item: InboxItem } | { kind: 'removed'; owner: string; id: string; outcome: InboxOutcome };

/** The item's title: the step's title (or id) for a step gate; the goal or workflow for a plan. */
function titleOf(run: GateRun, gate: OpenGate, workflowName?: string): string {
  if (gate.input) return gate.input.title.slice(0, 200);
  if (gate.kind === 'step') {
    const step = run.plan?.steps.find((s) => s.id === gate.stepId);
    return (step?.title ?? gate.stepId ?? 'step').slice(0, 200);
  }
  return (run.goal ?? workflowName ?? 'Review the plan').slice(0, 200);
}

export class InboxRecorder implements GateRecorder {
  private readonly listeners = new Set<(change: InboxChange) => void>();
  /** Items opened here and not yet told (by gate id). */
  private readonly opening = new Map<string, { owner: string; item: InboxItem }>();
  /** Owners of the items told added here and still pending (by gate id). */
  private readonly owners = new Map<string, string>();

  constructor(
    private readonly repo: InboxRepository,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  on(listener: (change: InboxChange) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private emit(change: InboxChange): void {
    for (const l of this.listeners) {
      try {
        l(change);
      } catch (err) {
        this.logger.warn({ err }, 'inbox listener failed');
      }
    }
  }

  async opened(run: GateRun, gate: OpenGate, trx: Trx): Promise<void> {
    const facts = await this.repo.runFacts(run.id, trx);
    const trigger = inboxTrigger(facts?.origin);
    const workflowId = facts?.workflow_id ?? undefined;
    const workflowName = workflowId ? await this.repo.workflowName(workflowId, trx) : undefined;
    const now = this.clock.now();
    const input = gate.kind === 'input' ? gate.input : undefined;
    const item: InboxItem = {
      id: gate.id,
      kind: gate.kind === 'plan' ? 'plan_approval' : gate.kind === 'input' ? 'input' : 'step_approval',
      runId: run.id,
      ...(gate.stepId ? { stepId: gate.stepId } : {}),
      title: titleOf(run, gate, workflowName),
      ...(workflowId ? { workflowId } : {}),
      ...(workflowName ? { workflowName } : {}),
      trigger,
      createdAt: input?.openedAt ?? isoTime(now),
      // an input expires after its own timeoutMs; an approval nobody watches after 24 hours, one
      // in a run a person started waits for that person
      ...(input?.expiresAt ? { expiresAt: input.expiresAt } : isUnattended(trigger) ? { expiresAt: isoTime(now + APPROVAL_GATE_TTL_MS) } : {}),
      ...(input ? { form: input.form } : {}),
      ...(gate.kind === 'plan' && run.plan ? { plan: run.plan } : {}),
      ...(gate.kind === 'step' ? { reason: gate.reason } : {}),
      ...(gate.kind === 'step' && gate.detail ? { detail: gate.detail as InboxItem['detail'] } : {}),
    };
    await this.repo.insert(rowOf(run.owner, item), trx);
    this.opening.set(gate.id, { owner: run.owner, item });
  }

  async settled(gateId: string, outcome: InboxOutcome, trx: Trx): Promise<void> {
    await this.repo.settle(gateId, outcome, isoTime(this.clock.now()), trx);
  }

  settledRaw(gateId: string, outcome: InboxOutcome): (raw: Database.Database) => void {
    return (raw) => this.repo.settleRaw(raw, gateId, outcome, isoTime(this.clock.now()));
  }

  told(change: { added: string } | { removed: string; outcome: InboxOutcome }): void {
    if ('added' in change) {
      const opened = this.opening.get(change.added);
      this.opening.delete(change.added);
      if (!opened) return;
      this.owners.set(change.added, opened.owner);
      return this.emit({ kind: 'added', owner: opened.owner, item: opened.item });
    }
    const owner = this.owners.get(change.removed);
    this.owners.delete(change.removed);
    if (owner) this.emit({ kind: 'removed', owner, id: change.removed, outcome: change.outcome });
  }

  runEnded(runId: string): void {
    this.repo.cancelRun(runId, isoTime(this.clock.now())).then(
      (ids) => {
        for (const id of ids) this.told({ removed: id, outcome: 'cancelled' });
      },
      (err) => this.logger.warn({ err, runId }, 'could not cancel the inbox items of an ended run'),
    );
  }

  /** An item settled outside a run's commit (start-up): told like the others. */
  removed(owner: string, id: string, outcome: InboxOutcome): void {
    this.owners.set(id, owner);
    this.told({ removed: id, outcome });
  }
}
