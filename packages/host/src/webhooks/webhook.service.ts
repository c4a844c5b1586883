import { FengYuError, isFengYuError, type JsonSchema, localize, type PermissionMode, type Problem, type WebhookDeliveryView, type WebhookTriggerView } from '@fengyu/protocol';
import type { Logger } from 'pino';
import type { CrashPoint } from '../config/crash-points';
import type { Clock, SandboxPosture } from '../context';
import { type AdmittedWithin, type CapacityRefusal, canSubmitWithin, type EndedTask, type PreparedSubmission, type SubmitWithin, type TaskSnapshot, type TaskSubmitter } from '../tasks/task-submitter';
import type { DeliveryRow, TriggerRow, WebhookRepository } from './webhook.repository';
import {
  CLAIM_PRUNE_BATCH,
  CLAIM_PRUNE_EVERY_MS,
  CLAIM_RETENTION_MS,
  decodeCursor,
  type DeliveryBinder,
  type DeliveryState,
  deliveryBinder,
  defaultsProblems,
  deliveryStateOf,
  effectiveState,
  encodeCursor,
  isTerminal,
  MAX_PAGE,
  newDeliveryId,
  newId,
  newSecret,
  digestBytes,
  secretMatches,
  sha256Hex,
  unbindableInputs,
} from './webhook-rules';

/**
 * Webhook triggers and deliveries. A delivery is authenticated by its trigger's secret, bound
 * against the workflow's active version, claimed in the database (the event id's digest, unique
 * per trigger, together with a CLAIMED audit row) and only then submitted as an interactive
 * background task; the audit row then follows the task to its end. Concurrent deliveries of one
 * event id share the first one's outcome; a claim whose submission never happened is reported
 * INTERRUPTED and never replayed.
 */

/** The active published version of an owner's workflow (throws workflow_not_found / workflow_not_published). */
export interface ActiveWorkflow {
  version: number;
  inputSchema: JsonSchema;
  /** The delivery checks of `inputSchema`, made once per version (made per delivery when absent). */
  binder?: DeliveryBinder;
}

export interface WebhookWorkflows {
  active(owner: string, workflowId: string): Promise<ActiveWorkflow>;
  /** Throws workflow_not_found for an unknown id or another owner's workflow. */
  exists(owner: string, workflowId: string): Promise<void>;
}

/** Refuses unattended runs under `ask` of a workflow with a non-read step no allow rule covers. */
export type UnattendedCheck = (req: { owner: string; workflowId: string; permissionMode: PermissionMode }) => Promise<void>;

export interface WebhookServiceDeps {
  repo: WebhookRepository;
  clock: Clock;
  tasks: TaskSubmitter;
  workflows: WebhookWorkflows;
  posture: () => SandboxPosture;
  logger: Logger;
  unattended?: UnattendedCheck;
  /**
   * Crash tests (docs/reliability.md): `webhook-claim` right after a claim is written (on SQLite's group
   * path, once the claim, audit and task rows are written, before they commit; elsewhere once the
   * claim committed, before the task is submitted); `webhook-commit` once the delivery is
   * committed, before its task starts and the sender is answered.
   */
  crashPoint?: CrashPoint;
  /** How often expired event-id claims are pruned, and how many per statement (tests shorten them). */
  claimPrune?: { everyMs: number; batch: number };
}

export interface DeliveryAnswer {
  taskId: string;
  deliveryId: string;
  duplicate: boolean;
}

export interface CreateTriggerBody {
  defaults?: unknown;
  permissionMode: PermissionMode;
  name?: string;
}

const EARLY_FINISH_LIMIT = 1000;

/** A delivery's inputs as bound and checked against the active version they were checked with. */
interface CheckedInputs {
  workflowVersion: number;
  inputs: Record<string, unknown>;
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

function capacityError(r: CapacityRefusal): FengYuError {
  return new FengYuError(
    'capacity_exhausted',
    { scope: r.capacityScope, retryAfterSeconds: r.retryAfterSeconds },
    { capacityScope: r.capacityScope, ...(r.capacityPriority ? { capacityPriority: r.capacityPriority } : {}), retryable: true, retryAfterSeconds: r.retryAfterSeconds },
  );
}

function fieldsOf(problems: Problem[]): string {
  return [...new Set(problems.map((p) => p.field ?? '(body)'))].join(', ');
}

function errorInfo(err: unknown): { code: string; message: string } {
  if (isFengYuError(err)) {
    const e = err as FengYuError;
    return { code: e.code, message: localize(e.code, e.params, 'en') };
  }
  return { code: 'internal', message: err instanceof Error ? err.message : String(err) };
}

export class WebhookService {
  /** Deliveries of one event id in progress (trigger id + digest → the first one's outcome). */
  private readonly inflight = new Map<string, Promise<DeliveryAnswer>>();
  /** Tasks that finished before their delivery row learned the task id. */
  private readonly earlyFinish = new Map<string, TaskSnapshot>();
  /**
   * Triggers by id with their secret digest as bytes, on the single-host SQLite file only (every
   * change goes through this service, which drops the entry: rotate, delete, the workflow's
   * deletion). On a shared database each delivery reads its trigger: another host may have
   * rotated its secret a moment ago.
   */
  private readonly triggers = new Map<string, { row: TriggerRow; digest: Buffer }>();
  /** Audit rows of ended tasks waiting for this turn's commit (single-host SQLite). */
  private finishes: Array<{ deliverySeq: number; acceptedMs: number; state: DeliveryState; completedAt: string; completedMs: number; error?: { code: string; message: string }; done(n: number): void; failed(err: unknown): void }> = [];
  private finishScheduled = false;
  /** How many times a cached trigger was dropped (a read that overlapped one is not cached). */
  private forgets = 0;
  private unsubscribe?: () => void;
  private unsubscribeEnd?: () => void;
  private pruneTimer?: ReturnType<typeof setInterval>;
  /** The prune in progress (one at a time). */
  private pruning?: Promise<void>;
  /**
   * Tasks whose audit row took their end inside the task's own end commit (nothing left to
   * follow when the end is reported). Should that commit fail, neither the task's end nor the
   * audit row's is durable, and both come back interrupted after a restart.
   */
  private readonly endedWithin = new Set<string>();
  /** Deliveries prepared in this turn of the event loop, committed together. */
  private group: Pending[] = [];
  private groupScheduled = false;
  /** The delivery of each task admitted in a group, until the task ends (its audit row is found by its rowid). */
  private readonly deliveryOfTask = new Map<string, { seq: number; acceptedMs: number }>();

  constructor(private readonly deps: WebhookServiceDeps) {}

  /** The last instant formatted (deliveries of one millisecond share it). */
  private isoMs = Number.NaN;
  private isoText = '';

  private iso(ms: number): string {
    if (ms !== this.isoMs) {
      this.isoText = new Date(ms).toISOString();
      this.isoMs = ms;
    }
    return this.isoText;
  }

  private sandboxedNow(): boolean {
    return this.deps.posture().mode === 'sandboxed';
  }

  view(row: TriggerRow): WebhookTriggerView {
    const s = effectiveState(row.state, row.created_sandboxed === 1, this.sandboxedNow());
    return {
      id: row.id,
      workflowId: row.workflow_id,
      name: row.name,
      defaults: JSON.parse(row.defaults),
      permissionMode: row.permission_mode as PermissionMode,
      state: s.state,
      ...(s.pausedReason ? { pausedReason: s.pausedReason } : {}),
      createdAt: row.created_at,
      ...(row.last_delivery_at ? { lastDeliveryAt: row.last_delivery_at } : {}),
    };
  }

  // ---- triggers -------------------------------------------------------------------------------

  /** Creates a trigger on a published workflow; the secret is returned once and kept as a digest. */
  async create(owner: string, workflowId: string, body: CreateTriggerBody): Promise<{ trigger: WebhookTriggerView; secret: string }> {
    const active = await this.deps.workflows.active(owner, workflowId);
    const unbindable = unbindableInputs(active.inputSchema);
    if (unbindable.length > 0) throw new FengYuError('webhook_inputs_unbindable', { fields: fieldsOf(unbindable) }, unbindable);
    const problems = defaultsProblems(active.inputSchema, body.defaults);
    if (problems.length > 0) throw new FengYuError('webhook_defaults_invalid', { fields: fieldsOf(problems) }, problems);
    await this.deps.unattended?.({ owner, workflowId, permissionMode: body.permissionMode });
    const secret = newSecret();
    const row: TriggerRow = {
      id: newId('wh_'),
      owner,
      workflow_id: workflowId,
      name: (body.name ?? '').trim() || 'Webhook',
      defaults: JSON.stringify(body.defaults ?? {}),
      permission_mode: body.permissionMode,
      secret_sha256: sha256Hex(secret),
      state: 'active',
      created_sandboxed: this.sandboxedNow() ? 1 : 0,
      created_at: this.iso(this.deps.clock.now()),
      last_delivery_at: null,
    };
    await this.deps.repo.insertTrigger(row);
    return { trigger: this.view(row), secret };
  }

  async list(owner: string, workflowId: string): Promise<{ items: WebhookTriggerView[] }> {
    await this.deps.workflows.exists(owner, workflowId);
    return { items: (await this.deps.repo.listTriggers(owner, workflowId)).map((r) => this.view(r)) };
  }

  private async owned(owner: string, workflowId: string, id: string): Promise<TriggerRow> {
    await this.deps.workflows.exists(owner, workflowId);
    const row = await this.deps.repo.ownedTrigger(owner, workflowId, id);
    if (!row) throw new FengYuError('webhook_trigger_not_found', { id });
    return row;
  }

  /** A new secret; the old one fails from now on. */
  async rotate(owner: string, workflowId: string, id: string): Promise<{ secret: string }> {
    await this.owned(owner, workflowId, id);
    const secret = newSecret();
    this.forget(id);
    await this.deps.repo.setSecret(id, sha256Hex(secret));
    this.forget(id);
    return { secret };
  }

  async remove(owner: string, workflowId: string, id: string): Promise<void> {
    await this.owned(owner, workflowId, id);
    this.forget(id);
    await this.deps.repo.deleteTrigger(id);
    this.forget(id);
  }

  /** Runs inside a workflow's delete transaction. */
  async disableForWorkflow(trx: Parameters<WebhookRepository['disableForWorkflow']>[0], owner: string, workflowId: string): Promise<void> {
    const ids = await this.deps.repo.disableForWorkflow(trx, owner, workflowId);
    for (const id of ids) this.forget(id);
  }

  /** Drops a trigger's cached row (its secret or state is changing). */
  private forget(id: string): void {
    this.forgets += 1;
    this.triggers.delete(id);
  }

  /** One page of a trigger's audit, newest first (≤ 100 rows). */
  async deliveries(owner: string, workflowId: string, id: string, limit = 50, cursor?: string): Promise<{ items: WebhookDeliveryView[]; nextCursor?: string }> {
    await this.owned(owner, workflowId, id);
    const before = decodeCursor(cursor);
    if (before === 'invalid') throw new FengYuError('webhook_cursor_invalid');
    await this.reconcile(id);
    const size = Math.min(Math.max(1, Math.floor(limit)), MAX_PAGE);
    const rows = await this.deps.repo.page(id, size + 1, before);
    const page = rows.slice(0, size);
    const last = page.at(-1);
    return { items: page.map(deliveryView), ...(rows.length > size && last ? { nextCursor: encodeCursor(last.seq) } : {}) };
  }

  // ---- deliveries -----------------------------------------------------------------------------

  /** The trigger a delivery names, authenticated by its secret (404 unknown or disabled, 401 bad secret). */
  async authenticate(triggerId: string, secret: unknown): Promise<TriggerRow> {
    let hit = this.triggers.get(triggerId);
    if (!hit) {
      const seen = this.forgets;
      const row = await this.deps.repo.trigger(triggerId);
      if (!row || row.state === 'disabled') throw new FengYuError('webhook_trigger_not_found', { id: triggerId });
      hit = { row, digest: digestBytes(row.secret_sha256) };
      // a rotation or deletion that ran during this read found nothing to drop: cache only when none ran
      if (this.deps.repo.singleWriter && seen === this.forgets) {
        if (this.triggers.size >= 1000) this.triggers.clear();
        this.triggers.set(triggerId, hit);
      }
    }
    if (!secretMatches(secret, hit.digest)) throw new FengYuError('webhook_secret_invalid');
    return hit.row;
  }

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
    const checked = { workflowVersion: active.version, inputs: bound.inputs };
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
    const early = this.earlyFinish.get(task.id);
    if (early) {
      this.earlyFinish.delete(task.id);
      await this.applyFinish(early);
    }
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
      prepared = tasks.prepareChecked(req, checked.workflowVersion);
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
        if (this.deliveryOfTask.size >= 10_000) this.deliveryOfTask.clear();
        this.deliveryOfTask.set(taskId, { seq, acceptedMs: p.acceptedMs });
        p.answer = { taskId, deliveryId: p.deliveryId, duplicate: false };
        return;
      }
      refusal = capacityError(result.refusal);
    }
    const now = this.deps.clock.now();
    group.record({ id: p.deliveryId, triggerId, acceptedAt: this.iso(p.acceptedMs), acceptedMs: p.acceptedMs, eventSha256: p.eventSha256, failed: errorInfo(refusal), completedAt: this.iso(now), completedMs: now });
    p.error = refusal;
  }

  // ---- task lifecycle -------------------------------------------------------------------------

  private async applyFinish(task: TaskSnapshot): Promise<number> {
    const state = deliveryStateOf(task);
    if (!isTerminal(state)) return 0;
    const finishedMs = task.finishedAt ? Date.parse(task.finishedAt) : this.deps.clock.now();
    const known = this.deliveryOfTask.get(task.id);
    if (known && this.deps.repo.singleWriter) {
      this.deliveryOfTask.delete(task.id);
      return new Promise<number>((done, failed) => {
        this.finishes.push({ deliverySeq: known.seq, acceptedMs: known.acceptedMs, state, completedAt: this.iso(finishedMs), completedMs: finishedMs, ...(task.error ? { error: task.error } : {}), done, failed });
        if (!this.finishScheduled) {
          this.finishScheduled = true;
          setImmediate(() => this.commitFinishes());
        }
      });
    }
    return this.deps.repo.finished(task.id, state, this.iso(finishedMs), finishedMs, task.error);
  }

  /** The audit rows of the tasks that ended in this turn, updated in one transaction. */
  private commitFinishes(): void {
    const group = this.deps.repo.grouped();
    if (!group) {
      // an async transaction holds the connection: try again in a moment
      setTimeout(() => this.commitFinishes(), 1);
      return;
    }
    const batch = this.finishes;
    this.finishes = [];
    this.finishScheduled = false;
    const changed: number[] = [];
    try {
      group.atomically(() => {
        for (const f of batch) changed.push(group.finishedDelivery(f.deliverySeq, f.acceptedMs, f.state, f.completedAt, f.completedMs, f.error));
      });
    } catch (err) {
      for (const f of batch) f.failed(err);
      return;
    }
    batch.forEach((f, i) => f.done(changed[i] ?? 0));
  }

  /**
   * Inside the commit that records a webhook task's end (SQLite): the audit row of a delivery
   * admitted here takes the task's end in that same commit. Anything else (a throw included) is
   * left to `onTaskFinished`.
   */
  private endWithin(task: EndedTask): void {
    if (task.kind !== 'workflow-webhook') return;
    const known = this.deliveryOfTask.get(task.id);
    const sync = this.deps.repo.within();
    if (!known || !sync) return;
    const state = deliveryStateOf({ state: task.state, queued: false });
    if (!isTerminal(state)) return;
    // whole milliseconds, as the task's reported end time
    const completedMs = Math.floor(task.finishedMs);
    sync.finishedDelivery(known.seq, known.acceptedMs, state, this.iso(completedMs), completedMs, task.error);
    this.deliveryOfTask.delete(task.id);
    if (this.endedWithin.size >= 10_000) this.endedWithin.clear();
    this.endedWithin.add(task.id);
  }

  /** Follows webhook tasks to their end (the audit row takes the task's terminal state). */
  private onTaskFinished(task: TaskSnapshot): void {
    if (task.kind !== 'workflow-webhook') return;
    if (this.endedWithin.delete(task.id)) return;
    if (this.earlyFinish.size >= EARLY_FINISH_LIMIT) {
      const oldest = this.earlyFinish.keys().next().value;
      if (oldest !== undefined) this.earlyFinish.delete(oldest);
    }
    this.earlyFinish.set(task.id, task);
    this.applyFinish(task)
      .then((n) => {
        if (n > 0) this.earlyFinish.delete(task.id);
      })
      .catch((err) => this.deps.logger.warn({ err, taskId: task.id }, 'webhook audit update failed'));
  }

  /** Brings open audit rows up to date with their tasks (after a restart, or before a listing). */
  async reconcile(triggerId?: string): Promise<void> {
    for (const open of await this.deps.repo.open(triggerId)) {
      const task = await this.deps.tasks.get(open.owner, open.task_id);
      if (!task) continue;
      if (isTerminal(deliveryStateOf(task))) await this.applyFinish(task);
      else if (deliveryStateOf(task) === 'SUBMITTED') await this.deps.repo.started(task.id);
    }
  }

  /**
   * On start: claims caught between claim and submission by a stop become INTERRUPTED (they are
   * never replayed), old event ids are forgotten, and task outcomes are followed again.
   */
  async start(): Promise<void> {
    // started twice (an embedding that also calls it), it still follows each task once
    this.unsubscribe?.();
    this.unsubscribe = this.deps.tasks.onFinished((t) => this.onTaskFinished(t));
    this.unsubscribeEnd?.();
    const tasks = this.deps.tasks as TaskSubmitter & Partial<SubmitWithin>;
    if (this.deps.repo.singleWriter && typeof tasks.onEndWithin === 'function') this.unsubscribeEnd = tasks.onEndWithin((t) => this.endWithin(t));
    const now = this.deps.clock.now();
    const error = { code: 'webhook_interrupted', message: 'The host stopped after this delivery was claimed and before its task was submitted; it is not replayed.' };
    const n = await this.deps.repo.interruptClaimed(this.iso(now), now, error);
    if (n > 0) this.deps.logger.warn({ count: n }, 'webhook deliveries interrupted by a stop were marked INTERRUPTED');
    await this.pruneClaims();
    const every = this.deps.claimPrune?.everyMs ?? CLAIM_PRUNE_EVERY_MS;
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    this.pruneTimer = setInterval(() => {
      this.pruneClaims().catch((err) => this.deps.logger.warn({ err }, 'pruning expired webhook event ids failed'));
    }, every);
    this.pruneTimer.unref();
  }

  /**
   * Forgets the event ids claimed more than `CLAIM_RETENTION_MS` ago, at most one batch per
   * statement with a turn of the event loop between two, so a long backlog never holds the
   * deliveries up for long. At start and then periodically: a host that runs for weeks keeps one
   * retention period of claims, not every claim since it started.
   */
  pruneClaims(): Promise<void> {
    if (this.pruning) return this.pruning;
    const batch = this.deps.claimPrune?.batch ?? CLAIM_PRUNE_BATCH;
    const run = async () => {
      // one cutoff for the whole run: claims made while it runs are not its business
      const before = this.deps.clock.now() - CLAIM_RETENTION_MS;
      while ((await this.deps.repo.pruneClaims(before, batch)) >= batch) await new Promise<void>((r) => setImmediate(r));
    };
    this.pruning = run().finally(() => {
      this.pruning = undefined;
    });
    return this.pruning;
  }

  stop(): void {
    if (this.pruneTimer) clearInterval(this.pruneTimer);
    this.pruneTimer = undefined;
    this.unsubscribe?.();
    this.unsubscribeEnd?.();
    if (this.finishes.length > 0) this.commitFinishes();
  }
}

function deliveryView(r: DeliveryRow): WebhookDeliveryView {
  return {
    id: r.id,
    state: r.state,
    acceptedAt: r.accepted_at,
    ...(r.completed_at ? { completedAt: r.completed_at } : {}),
    ...(r.duration_ms !== null ? { durationMs: r.duration_ms } : {}),
    ...(r.task_id ? { taskId: r.task_id } : {}),
    idempotencyKeySupplied: r.idempotency_key_supplied === 1,
    ...(r.error_code ? { error: { code: r.error_code, message: r.error_message ?? '' } } : {}),
  };
}
