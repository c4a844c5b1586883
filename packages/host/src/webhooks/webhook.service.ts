import { FengYuError, type PermissionMode, secretInputNames, type WebhookDeliveryView, type WebhookTriggerView } from '@fengyu/protocol';
import { dropKeptInputs, keepInputs } from '../agent/secret-inputs';
import type { DeliveryRow, TriggerRow, WebhookRepository } from './webhook.repository';
import {
  CLAIM_PRUNE_BATCH,
  CLAIM_PRUNE_EVERY_MS,
  CLAIM_RETENTION_MS,
  decodeCursor,
  defaultsProblems,
  effectiveState,
  encodeCursor,
  MAX_PAGE,
  newId,
  newSecret,
  digestBytes,
  secretMatches,
  sha256Hex,
  unbindableInputs,
  isoFormatter,
} from './webhook-rules';
import { DeliveryAdmission, fieldsOf } from './webhook-admission';
import { DeliveryAudit } from './webhook-audit';
import type { CreateTriggerBody, DeliveryAnswer, WebhookServiceDeps } from './webhook-types';

export type { ActiveWorkflow, CreateTriggerBody, DeliveryAnswer, UnattendedCheck, WebhookServiceDeps, WebhookWorkflows } from './webhook-types';

/**
 * Webhook triggers and deliveries. A delivery is authenticated by its trigger's secret, bound
 * against the workflow's active version, claimed in the database (the event id's digest, unique
 * per trigger, together with a CLAIMED audit row) and only then submitted as an interactive
 * background task; the audit row then follows the task to its end. Concurrent deliveries of one
 * event id share the first one's outcome; a claim whose submission never happened is reported
 * INTERRUPTED and never replayed.
 */

export class WebhookService {
  /**
   * Triggers by id with their secret digest as bytes, on the single-host SQLite file only (every
   * change goes through this service, which drops the entry: rotate, delete, the workflow's
   * deletion). On a shared database each delivery reads its trigger: another host may have
   * rotated its secret a moment ago.
   */
  private readonly triggers = new Map<string, { row: TriggerRow; digest: Buffer }>();
  /** How many times a cached trigger was dropped (a read that overlapped one is not cached). */
  private forgets = 0;
  private pruneTimer?: ReturnType<typeof setInterval>;
  /** The prune in progress (one at a time). */
  private pruning?: Promise<void>;
  private readonly iso = isoFormatter();
  private readonly audit: DeliveryAudit;
  private readonly admission: DeliveryAdmission;

  constructor(private readonly deps: WebhookServiceDeps) {
    this.audit = new DeliveryAudit(deps, this.iso);
    this.admission = new DeliveryAdmission(deps, this.audit, this.iso, () => this.sandboxedNow());
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
    const id = newId('wh_');
    // a secret input's default goes into the vault (`trigger:<id>/input/<name>`); the row keeps the marker
    const defaults = await keepInputs(this.deps.vault, owner, `trigger:${id}`, (body.defaults ?? {}) as Record<string, unknown>, secretInputNames(active.inputSchema));
    const row: TriggerRow = {
      id,
      owner,
      workflow_id: workflowId,
      name: (body.name ?? '').trim() || 'Webhook',
      defaults: JSON.stringify(defaults),
      permission_mode: body.permissionMode,
      secret_sha256: sha256Hex(secret),
      state: 'active',
      created_sandboxed: this.sandboxedNow() ? 1 : 0,
      created_at: this.iso(this.deps.clock.now()),
      last_delivery_at: null,
    };
    try {
      await this.deps.repo.insertTrigger(row);
    } catch (e) {
      await dropKeptInputs(this.deps.vault, owner, `trigger:${id}`);
      throw e;
    }
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
    // a delivery's task still queued then runs with the marker
    await dropKeptInputs(this.deps.vault, owner, `trigger:${id}`);
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
  deliver(trigger: TriggerRow, eventId: string | undefined, body: unknown): Promise<DeliveryAnswer> {
    return this.admission.deliver(trigger, eventId, body);
  }

  /** Brings open audit rows up to date with their tasks (after a restart, or before a listing). */
  reconcile(triggerId?: string): Promise<void> {
    return this.audit.reconcile(triggerId);
  }

  // ---- lifecycle ------------------------------------------------------------------------------

  /**
   * On start: claims caught between claim and submission by a stop become INTERRUPTED (they are
   * never replayed), old event ids are forgotten, and task outcomes are followed again.
   */
  async start(): Promise<void> {
    this.audit.follow();
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
    this.audit.stop();
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
