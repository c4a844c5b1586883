import { FengYuError, isFengYuError, localize, type PermissionMode, type Problem } from '@fengyu/protocol';
import { type AdmittedWithin, type CapacityRefusal, canSubmitWithin, type PreparedSubmission, type SubmitWithin, type TaskSubmitter } from '../tasks/task-submitter';
import type { TriggerRow, WebhookRepository } from './webhook.repository';
import type { ActiveWorkflow, DeliveryAnswer, WebhookServiceDeps } from './webhook-types';
import type { DeliveryAudit } from './webhook-audit';
import { sealKeptInputs } from '../agent/secret-inputs';
import { newTaskId } from '../tasks/task-id';
import { deliveryBinder, deliveryStateOf, effectiveState, newDeliveryId, sha256Hex } from './webhook-rules';

/**
 * A delivery's admission: bound against the workflow's active version, claimed in the database
 * (the event id's digest, unique per trigger, together with a CLAIMED audit row) and only then
 * submitted as an interactive background task. Concurrent deliveries of one event id share the
 * first one's outcome; a claim whose submission never happened is reported INTERRUPTED.
 */

/** A delivery's inputs as bound and checked against the active version they were checked with. */
interface CheckedInputs {
  workflowVersion: number;
  inputs: Record<string, unknown>;
  /** The version's secret inputs (sealed under the task's id on the group path). */
  secret: string[];
}
const NO_DEFAULTS: Readonly<Record<string, unknown>> = Object.freeze({});
const noop = (): void => undefined;

/**
 * A delivery waiting for its group's transaction. One object per delivery, its fields set in
 * place (no closures per delivery): the commit fills `answer` or `error`, then settles it.
 */
interface Pending {
  trigger: TriggerRow;
  deliveryId: string;
  acceptedMs: number;
  eventSha256: string | undefined;
  prepared: PreparedSubmission | undefined;
  /** Why the submission could not even be prepared (recorded FAILED, claim released). */
  failure: unknown;
  /** The outcome decided inside the transaction, reported once it committed. */
  answer: DeliveryAnswer | undefined;
  error: unknown;
  resolve: (answer: DeliveryAnswer) => void;
  reject: (err: unknown) => void;
}

export function capacityError(r: CapacityRefusal): FengYuError {
  return new FengYuError(
    'capacity_exhausted',
    { scope: r.capacityScope, retryAfterSeconds: r.retryAfterSeconds },
    { capacityScope: r.capacityScope, ...(r.capacityPriority ? { capacityPriority: r.capacityPriority } : {}), retryable: true, retryAfterSeconds: r.retryAfterSeconds },
  );
}

export function fieldsOf(problems: Problem[]): string {
  return [...new Set(problems.map((p) => p.field ?? '(body)'))].join(', ');
}

export function errorInfo(err: unknown): { code: string; message: string } {
  if (isFengYuError(err)) {
    const e = err as FengYuError;
    return { code: e.code, message: localize(e.code, e.params, 'en') };
  }
  return { code: 'internal', message: err instanceof Error ? err.message : String(err) };
}

export class DeliveryAdmission {
  /** Deliveries of one event id in progress (trigger id + digest → the first one's outcome). */
  private readonly inflight = new Map<string, Promise<DeliveryAnswer>>();
  /** Deliveries prepared in this turn of the event loop, committed together. */
  private group: Pending[] = [];
  private groupScheduled = false;

  constructor(
    private readonly deps: WebhookServiceDeps,
    private readonly audit: DeliveryAudit,
    private readonly iso: (ms: number) => string,
    private readonly sandboxedNow: () => boolean,
  ) {}

  /** Accepts one authenticated delivery: bind, claim, submit. */
  async deliver(trigger: TriggerRow, eventId: string | undefined, body: unknown): Promise<DeliveryAnswer> {
    if (effectiveState(trigger.state, trigger.created_sandboxed === 1, this.sandboxedNow()).state === 'paused') throw new FengYuError('webhook_trigger_paused', { id: trigger.id });
    let active: ActiveWorkflow;
    try {
      active = await this.deps.workflows.active(trigger.owner, trigger.workflow_id);
    } catch (err) {
      if (isFengYuError(err) && (err as FengYuError).code === 'workflow_not_found') throw new FengYuError('webhook_trigger_not_found', { id: trigger.id });
      throw err;
    }
    const binder = active.binder ?? deliveryBinder(active.inputSchema);
    const unbindable = binder.unbindable;
    if (unbindable.length > 0) throw new FengYuError('webhook_inputs_unbindable', { fields: fieldsOf(unbindable) }, unbindable);
    const bound = binder.bind(trigger.defaults === '{}' ? NO_DEFAULTS : JSON.parse(trigger.defaults), body);
    if (!bound.ok) throw new FengYuError('webhook_body_invalid', { fields: fieldsOf(bound.problems) }, bound.problems);
    // the inputs are checked here, at the trust boundary, against this version: the task takes them as they are
    const checked = { workflowVersion: active.version, inputs: bound.inputs, secret: binder.secret };
    if (eventId === undefined) return this.admit(trigger, checked);
    const digest = sha256Hex(eventId);
    const key = `${trigger.id}\n${digest}`;
    const running = this.inflight.get(key);
    if (running) return { ...(await running), duplicate: true };
    const p = this.admit(trigger, checked, digest);
    this.inflight.set(key, p);
    try {
      return await p;
    } finally {
      this.inflight.delete(key);
    }
  }

  private admit(trigger: TriggerRow, checked: CheckedInputs, eventSha256?: string): Promise<DeliveryAnswer> {
    const tasks = this.deps.tasks;
    if (this.deps.repo.grouped() && canSubmitWithin(tasks)) return this.admitGrouped(tasks, trigger, checked, eventSha256);
    return this.admitAlone(trigger, checked, eventSha256);
  }

  /** Claim, submit, then record the task: three commits (a shared database, or no grouped path). */
  private async admitAlone(trigger: TriggerRow, checked: CheckedInputs, eventSha256?: string): Promise<DeliveryAnswer> {
    const inputs = checked.inputs;
    const acceptedMs = this.deps.clock.now();
    const deliveryId = newDeliveryId(acceptedMs);
    const claim = await this.deps.repo.claim({ id: deliveryId, triggerId: trigger.id, acceptedAt: this.iso(acceptedMs), acceptedMs, ...(eventSha256 ? { eventSha256 } : {}) });
    if (!claim.claimed) {
      if (!claim.existing.task_id) throw new FengYuError('webhook_event_interrupted');
      return { taskId: claim.existing.task_id, deliveryId: claim.existing.delivery_id, duplicate: true };
    }
    this.deps.crashPoint?.('webhook-claim');
    const eventClaim = eventSha256 ? { triggerId: trigger.id, eventSha256 } : undefined;
    let result: Awaited<ReturnType<TaskSubmitter['submit']>>;
    try {
      result = await this.deps.tasks.submit({
        ownerId: trigger.owner,
        workflowId: trigger.workflow_id,
        inputs,
        priority: 'interactive',
        kind: 'workflow-webhook',
        permissionMode: trigger.permission_mode as PermissionMode,
        triggerId: trigger.id,
      });
    } catch (err) {
      const now = this.deps.clock.now();
      await this.deps.repo.refused(deliveryId, errorInfo(err), this.iso(now), now, eventClaim);
      throw err;
    }
    if (!result.ok) {
      const err = capacityError(result.refusal);
      const now = this.deps.clock.now();
      await this.deps.repo.refused(deliveryId, errorInfo(err), this.iso(now), now, eventClaim);
      throw err;
    }
    const task = result.task;
    await this.deps.repo.submitted(deliveryId, task.id, deliveryStateOf(task), eventClaim);
    this.deps.crashPoint?.('webhook-commit');
    await this.audit.submitted(task.id);
    return { taskId: task.id, deliveryId, duplicate: false };
  }

  /**
   * SQLite: the deliveries prepared in one turn of the event loop are committed in one
   * transaction — for each, the event id is looked up first (a repeated id gets the original
   * task), then the task is admitted and its row, the event-id claim naming it and the audit row
   * are each written once. No task starts before that commit, so a crash before it leaves
   * neither claim nor task; a delivery refused for capacity leaves its audit row FAILED and no
   * claim.
   */
  private admitGrouped(tasks: TaskSubmitter & SubmitWithin, trigger: TriggerRow, checked: CheckedInputs, eventSha256?: string): Promise<DeliveryAnswer> {
    const acceptedMs = this.deps.clock.now();
    const req = {
      ownerId: trigger.owner,
      workflowId: trigger.workflow_id,
      inputs: checked.inputs,
      priority: 'interactive' as const,
      kind: 'workflow-webhook' as const,
      permissionMode: trigger.permission_mode as PermissionMode,
      triggerId: trigger.id,
    };
    if (!tasks.prepareChecked) {
      // an executor that checks each submission asynchronously
      return tasks.prepareSubmit(req).then(
        (prepared) => this.enqueue(tasks, trigger, acceptedMs, eventSha256, prepared, undefined),
        (err: unknown) => this.enqueue(tasks, trigger, acceptedMs, eventSha256, undefined, err),
      );
    }
    let prepared: PreparedSubmission | undefined;
    let failure: unknown;
    try {
      // a secret input the delivery sends is sealed under the task's id (chosen here) and written
      // with the task's row in the group's transaction, only if the task is admitted
      const taskId = checked.secret.length > 0 ? newTaskId(acceptedMs) : undefined;
      const kept = taskId ? sealKeptInputs(this.deps.vault, trigger.owner, `task:${taskId}`, req.inputs, checked.secret) : undefined;
      prepared = kept?.seal ? tasks.prepareChecked({ ...req, inputs: kept.inputs, taskId }, checked.workflowVersion, kept.seal) : tasks.prepareChecked(kept ? { ...req, inputs: kept.inputs } : req, checked.workflowVersion);
    } catch (err) {
      failure = err;
    }
    return this.enqueue(tasks, trigger, acceptedMs, eventSha256, prepared, failure);
  }

  /** Adds a prepared delivery to the group committed in the next turn. */
  private enqueue(tasks: TaskSubmitter & SubmitWithin, trigger: TriggerRow, acceptedMs: number, eventSha256: string | undefined, prepared: PreparedSubmission | undefined, failure: unknown): Promise<DeliveryAnswer> {
    const pending: Pending = { trigger, deliveryId: newDeliveryId(acceptedMs), acceptedMs, eventSha256, prepared, failure, answer: undefined, error: undefined, resolve: noop, reject: noop };
    const settled = new Promise<DeliveryAnswer>((resolve, reject) => {
      pending.resolve = resolve;
      pending.reject = reject;
    });
    this.group.push(pending);
    if (!this.groupScheduled) {
      this.groupScheduled = true;
      setImmediate(() => this.commitGroup(tasks));
    }
    return settled;
  }

  private commitGroup(tasks: TaskSubmitter & SubmitWithin): void {
    const batch = this.group;
    this.group = [];
    this.groupScheduled = false;
    const group = this.deps.repo.grouped();
    if (!canSubmitWithin(tasks)) {
      for (const p of batch) p.reject(new FengYuError('task_host_stopping'));
      return;
    }
    if (!group) {
      // an async transaction holds the connection: try again in a moment
      this.group.unshift(...batch);
      this.groupScheduled = true;
      setTimeout(() => this.commitGroup(tasks), 1);
      return;
    }
    const admitted: AdmittedWithin[] = [];
    try {
      group.atomically(() => {
        for (const p of batch) this.writeDelivery(group, tasks, p, admitted);
      });
    } catch (err) {
      for (const a of admitted) a.rolledBack();
      for (const p of batch) this.deps.repo.forgetCount(p.trigger.id);
      for (const p of batch) p.reject(err);
      return;
    }
    this.deps.crashPoint?.('webhook-commit');
    for (const a of admitted) a.committed();
    for (const p of batch) {
      if (p.answer) p.resolve(p.answer);
      else p.reject(p.error);
    }
  }

  /**
   * One delivery of a group, inside its transaction: a repeated event id gets the original task;
   * otherwise the task is admitted and the claim, audit row and task row are each written once;
   * a refusal leaves a FAILED audit row and no claim (a retry may run). Sets `p.answer` or `p.error`.
   */
  private writeDelivery(group: NonNullable<ReturnType<WebhookRepository['grouped']>>, tasks: TaskSubmitter & SubmitWithin, p: Pending, admitted: AdmittedWithin[]): void {
    const triggerId = p.trigger.id;
    const existing = p.eventSha256 !== undefined ? group.existingClaim(triggerId, p.eventSha256) : undefined;
    if (existing) {
      if (existing.task_id) p.answer = { taskId: existing.task_id, deliveryId: existing.delivery_id, duplicate: true };
      else p.error = new FengYuError('webhook_event_interrupted');
      return;
    }
    let refusal: unknown = p.failure;
    if (p.prepared) {
      const result = tasks.admitWithin(p.prepared);
      if (result.ok) {
        admitted.push(result);
        const taskId = result.task.id;
        const seq = group.record({ id: p.deliveryId, triggerId, acceptedAt: this.iso(p.acceptedMs), acceptedMs: p.acceptedMs, eventSha256: p.eventSha256, taskId, state: deliveryStateOf(result.task) });
        this.deps.crashPoint?.('webhook-claim');
        this.audit.track(taskId, seq, p.acceptedMs);
        p.answer = { taskId, deliveryId: p.deliveryId, duplicate: false };
        return;
      }
      refusal = capacityError(result.refusal);
    }
    const now = this.deps.clock.now();
    group.record({ id: p.deliveryId, triggerId, acceptedAt: this.iso(p.acceptedMs), acceptedMs: p.acceptedMs, eventSha256: p.eventSha256, failed: errorInfo(refusal), completedAt: this.iso(now), completedMs: now });
    p.error = refusal;
  }
}
