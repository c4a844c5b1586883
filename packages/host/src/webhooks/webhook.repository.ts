import type BetterSqlite3 from 'better-sqlite3';
import { type Kysely, sql, type Transaction } from 'kysely';
import { type Db, rawOf } from '../storage/database';
import { type DeliveryState, MAX_AUDIT_ROWS } from './webhook-rules';

/** Triggers, their delivery audit and event-id claims (tables of migration 070). */

export interface TriggerRow {
  id: string;
  owner: string;
  workflow_id: string;
  name: string;
  defaults: string;
  permission_mode: string;
  secret_sha256: string;
  state: 'active' | 'disabled';
  created_sandboxed: number;
  created_at: string;
  last_delivery_at: string | null;
}

export interface DeliveryRow {
  seq: number;
  id: string;
  trigger_id: string;
  state: DeliveryState;
  accepted_at: string;
  accepted_ms: number;
  completed_at: string | null;
  duration_ms: number | null;
  task_id: string | null;
  idempotency_key_supplied: number;
  error_code: string | null;
  error_message: string | null;
}

export interface ClaimRow {
  trigger_id: string;
  event_sha256: string;
  delivery_id: string;
  task_id: string | null;
  claimed_ms: number;
}

type Tables = {
  webhook_triggers: TriggerRow;
  webhook_deliveries: Omit<DeliveryRow, 'seq'> & { seq?: number };
  webhook_event_claims: ClaimRow;
};
export type WebhookTrx = Transaction<Tables>;

export interface NewDelivery {
  id: string;
  triggerId: string;
  acceptedAt: string;
  acceptedMs: number;
  /** The event id's digest, when one was supplied (kept only in the claim table). */
  eventSha256?: string | undefined;
}

/**
 * A delivery written once, in its final state of the group's transaction: admitted (with its task,
 * and its event-id claim naming that task), or refused (FAILED, and no claim).
 */
export type GroupedDelivery = NewDelivery & ({ taskId: string; state: DeliveryState } | { failed: { code: string; message: string }; completedAt: string; completedMs: number });

/**
 * The open audit rows (their task has not ended), written exactly as the condition of the partial
 * index `webhook_deliveries_open_task` (migration 120): a query that looks an open row up by task
 * id must contain this condition for SQLite to use that index. Comparisons, not an IN list: SQLite
 * builds a temporary B-tree for an IN list of more than two constants on every run of a statement.
 */
export const OPEN_ROW = "(state = 'CLAIMED' or state = 'QUEUED' or state = 'SUBMITTED')";

export type ClaimResult = { claimed: true } | { claimed: false; existing: Pick<ClaimRow, 'delivery_id' | 'task_id'> };

/** The delivery hot path as prepared statements run synchronously (one transaction, no awaits). */
class SyncStatements {
  private readonly insertClaim;
  private readonly selectClaim;
  private readonly insertDelivery;
  private readonly countAudit;
  private readonly pruneAudit;
  /** Audit rows per trigger, counted once and then kept by the only writer (this process). */
  private readonly counts = new Map<string, number>();
  /** Triggers that gained audit rows in the open `atomically` call (capped once, before it commits). */
  private readonly grown = new Set<string>();
  private readonly markSubmitted;
  private readonly claimTask;
  private readonly releaseClaim;
  private readonly acceptedMsOf;
  private readonly markFailed;
  private readonly openByTask;
  private readonly markFinished;
  private readonly markFinishedSeq;
  private readonly insertClaimOfTask;
  private readonly insertAdmitted;
  private readonly insertRefused;
  readonly claim: (d: NewDelivery) => ClaimResult;
  /** The claim of an event id, if one was committed (or written earlier in this transaction). */
  readonly existingClaim: (triggerId: string, eventSha256: string) => Pick<ClaimRow, 'delivery_id' | 'task_id'> | undefined;
  /** Writes a delivery of a group (inside `atomically`, after `existingClaim` found no claim); returns its row's `seq`. */
  readonly record: (d: GroupedDelivery) => number;
  readonly submitted: (deliveryId: string, taskId: string, state: DeliveryState, eventClaim?: { triggerId: string; eventSha256: string }) => void;
  readonly refused: (deliveryId: string, error: { code: string; message: string }, completedAt: string, completedMs: number, eventClaim?: { triggerId: string; eventSha256: string }) => void;
  readonly finished: (taskId: string, state: DeliveryState, completedAt: string, completedMs: number, error?: { code: string; message: string }) => number;
  /**
   * The same, found by the delivery row's `seq` (its rowid; never reused, so a row the audit cap
   * has deleted changes nothing) when the caller knows it.
   */
  readonly finishedDelivery: (seq: number, acceptedMs: number, state: DeliveryState, completedAt: string, completedMs: number, error?: { code: string; message: string }) => number;
  /** Runs `fn` in one transaction (a savepoint when one is open): every row it writes commits together or not at all. */
  readonly atomically: <T>(fn: () => T) => T;

  constructor(readonly raw: BetterSqlite3.Database) {
    this.insertClaim = raw.prepare('insert into webhook_event_claims (trigger_id, event_sha256, delivery_id, task_id, claimed_ms) values (?, ?, ?, null, ?) on conflict (trigger_id, event_sha256) do nothing');
    this.selectClaim = raw.prepare('select delivery_id, task_id from webhook_event_claims where trigger_id = ? and event_sha256 = ?');
    this.insertDelivery = raw.prepare(
      "insert into webhook_deliveries (id, trigger_id, state, accepted_at, accepted_ms, idempotency_key_supplied) values (?, ?, 'CLAIMED', ?, ?, ?)",
    );
    this.countAudit = raw.prepare('select count(*) as n from webhook_deliveries where trigger_id = ?');
    // the n oldest rows of a trigger: every row up to the n-th oldest's seq (one range delete on the (trigger_id, seq) index)
    this.pruneAudit = raw.prepare('delete from webhook_deliveries where trigger_id = ? and seq <= (select seq from webhook_deliveries where trigger_id = ? order by seq limit 1 offset ?)');
    this.markSubmitted = raw.prepare("update webhook_deliveries set task_id = ?, state = ? where id = ? and state = 'CLAIMED'");
    this.claimTask = raw.prepare('update webhook_event_claims set task_id = ? where trigger_id = ? and event_sha256 = ?');
    this.releaseClaim = raw.prepare('delete from webhook_event_claims where trigger_id = ? and event_sha256 = ? and delivery_id = ?');
    this.acceptedMsOf = raw.prepare('select accepted_ms from webhook_deliveries where id = ?');
    this.markFailed = raw.prepare("update webhook_deliveries set state = 'FAILED', completed_at = ?, duration_ms = ?, error_code = ?, error_message = ? where id = ?");
    this.openByTask = raw.prepare(`select id, accepted_ms from webhook_deliveries where task_id = ? and ${OPEN_ROW}`);
    this.markFinished = raw.prepare(`update webhook_deliveries set state = ?, completed_at = ?, duration_ms = ?, error_code = ?, error_message = ? where id = ? and ${OPEN_ROW}`);
    this.markFinishedSeq = raw.prepare(`update webhook_deliveries set state = ?, completed_at = ?, duration_ms = ?, error_code = ?, error_message = ? where seq = ? and ${OPEN_ROW}`);
    this.insertClaimOfTask = raw.prepare('insert into webhook_event_claims (trigger_id, event_sha256, delivery_id, task_id, claimed_ms) values (?, ?, ?, ?, ?) on conflict (trigger_id, event_sha256) do nothing');
    this.insertAdmitted = raw.prepare('insert into webhook_deliveries (id, trigger_id, state, accepted_at, accepted_ms, task_id, idempotency_key_supplied) values (?, ?, ?, ?, ?, ?, ?)');
    this.insertRefused = raw.prepare(
      "insert into webhook_deliveries (id, trigger_id, state, accepted_at, accepted_ms, completed_at, duration_ms, idempotency_key_supplied, error_code, error_message) values (?, ?, 'FAILED', ?, ?, ?, ?, ?, ?, ?)",
    );
    this.existingClaim = (triggerId, eventSha256) => this.selectClaim.get(triggerId, eventSha256) as Pick<ClaimRow, 'delivery_id' | 'task_id'> | undefined;
    this.record = (d) => {
      const keyed = d.eventSha256 !== undefined ? 1 : 0;
      let written: BetterSqlite3.RunResult;
      if ('taskId' in d) {
        // the caller found no claim in this transaction; a conflict here means a second writer, and undoes the whole group
        if (d.eventSha256 !== undefined && this.insertClaimOfTask.run(d.triggerId, d.eventSha256, d.id, d.taskId, d.acceptedMs).changes === 0) throw new Error('the event id was claimed by another writer');
        written = this.insertAdmitted.run(d.id, d.triggerId, d.state, d.acceptedAt, d.acceptedMs, d.taskId, keyed);
      } else {
        written = this.insertRefused.run(d.id, d.triggerId, d.acceptedAt, d.acceptedMs, d.completedAt, Math.max(0, d.completedMs - d.acceptedMs), keyed, d.failed.code, d.failed.message);
      }
      this.added(d.triggerId);
      this.grown.add(d.triggerId);
      return Number(written.lastInsertRowid);
    };
    // the audit cap of every trigger the group wrote to, once per trigger, before the outermost call commits
    let depth = 0;
    const atomic = raw.transaction((fn: () => unknown) => {
      const outermost = depth === 0;
      depth += 1;
      try {
        const result = fn();
        if (outermost) for (const id of this.grown) this.trim(id);
        return result;
      } finally {
        depth -= 1;
        if (outermost) this.grown.clear();
      }
    });
    this.atomically = <T>(fn: () => T): T => atomic(fn) as T;
    this.refused = raw.transaction((deliveryId: string, error: { code: string; message: string }, completedAt: string, completedMs: number, eventClaim?: { triggerId: string; eventSha256: string }) => {
      if (eventClaim) this.releaseClaim.run(eventClaim.triggerId, eventClaim.eventSha256, deliveryId);
      const row = this.acceptedMsOf.get(deliveryId) as { accepted_ms: number } | undefined;
      if (row) this.markFailed.run(completedAt, Math.max(0, completedMs - row.accepted_ms), error.code, error.message, deliveryId);
    });
    this.finishedDelivery = (seq, acceptedMs, state, completedAt, completedMs, error) =>
      this.markFinishedSeq.run(state, completedAt, Math.max(0, completedMs - acceptedMs), error?.code ?? null, error?.message ?? null, seq).changes;
    this.finished = (taskId, state, completedAt, completedMs, error) => {
      const row = this.openByTask.get(taskId) as { id: string; accepted_ms: number } | undefined;
      if (!row) return 0;
      return this.markFinished.run(state, completedAt, Math.max(0, completedMs - row.accepted_ms), error?.code ?? null, error?.message ?? null, row.id).changes;
    };
    this.claim = raw.transaction((d: NewDelivery): ClaimResult => {
      if (d.eventSha256 !== undefined && this.insertClaim.run(d.triggerId, d.eventSha256, d.id, d.acceptedMs).changes === 0) {
        return { claimed: false, existing: this.selectClaim.get(d.triggerId, d.eventSha256) as Pick<ClaimRow, 'delivery_id' | 'task_id'> };
      }
      this.insertDelivery.run(d.id, d.triggerId, d.acceptedAt, d.acceptedMs, d.eventSha256 !== undefined ? 1 : 0);
      this.cap(d.triggerId);
      return { claimed: true };
    });
    this.submitted = raw.transaction((deliveryId: string, taskId: string, state: DeliveryState, eventClaim?: { triggerId: string; eventSha256: string }) => {
      this.markSubmitted.run(taskId, state, deliveryId);
      if (eventClaim) this.claimTask.run(taskId, eventClaim.triggerId, eventClaim.eventSha256);
    });
  }

  /** After one audit row was added: the trigger keeps its newest `MAX_AUDIT_ROWS`. */
  private cap(triggerId: string): void {
    this.added(triggerId);
    this.trim(triggerId);
  }

  /** Counts one audit row just written (the first time, by reading the trigger's count, that row included). */
  private added(triggerId: string): void {
    this.counts.set(triggerId, (this.counts.get(triggerId) ?? (this.countAudit.get(triggerId) as { n: number }).n - 1) + 1);
  }

  /** Deletes the trigger's oldest audit rows beyond `MAX_AUDIT_ROWS` (one range delete). */
  private trim(triggerId: string): void {
    const count = this.counts.get(triggerId) ?? 0;
    if (count > MAX_AUDIT_ROWS) this.pruneAudit.run(triggerId, triggerId, count - MAX_AUDIT_ROWS - 1);
    this.counts.set(triggerId, Math.min(count, MAX_AUDIT_ROWS));
  }

  /** Forgets a trigger's count (its rows were written or deleted by another path). */
  forget(triggerId: string): void {
    this.counts.delete(triggerId);
  }
}

export class WebhookRepository {
  private readonly db: Kysely<Tables>;
  private readonly sync?: SyncStatements;

  constructor(db: Db) {
    this.db = db.withTables<Tables>();
    const raw = rawOf(db);
    if (raw) this.sync = new SyncStatements(raw);
  }

  /**
   * True on the host's own SQLite file: this process is its only writer (one host per home), so
   * what it caches of a trigger is changed only through it. False on a shared PostgreSQL database,
   * where another host may rotate or delete a trigger at any moment.
   */
  get singleWriter(): boolean {
    return this.sync !== undefined;
  }

  /** The synchronous statements, when no async transaction is open on the connection. */
  private direct(): SyncStatements | undefined {
    return this.sync && !this.sync.raw.inTransaction ? this.sync : undefined;
  }

  /**
   * The synchronous statements for a group of deliveries committed in one transaction (SQLite,
   * when no async transaction is open on the connection); undefined otherwise.
   */
  grouped(): Pick<SyncStatements, 'atomically' | 'existingClaim' | 'record' | 'finishedDelivery'> | undefined {
    return this.direct();
  }

  /**
   * The synchronous statements inside a synchronous transaction another writer holds open on the
   * SQLite connection (a task's end commit); undefined elsewhere.
   */
  within(): Pick<SyncStatements, 'finishedDelivery'> | undefined {
    return this.sync?.raw.inTransaction ? this.sync : undefined;
  }

  /** Forgets the kept audit count of a trigger (a transaction that wrote its rows rolled back). */
  forgetCount(triggerId: string): void {
    this.sync?.forget(triggerId);
  }

  async insertTrigger(row: TriggerRow): Promise<void> {
    await this.db.insertInto('webhook_triggers').values(row).execute();
  }

  /** Any owner's trigger (deliveries authenticate by secret, not by owner). */
  async trigger(id: string): Promise<TriggerRow | undefined> {
    return this.db.selectFrom('webhook_triggers').selectAll().where('id', '=', id).executeTakeFirst();
  }

  async ownedTrigger(owner: string, workflowId: string, id: string): Promise<TriggerRow | undefined> {
    return this.db.selectFrom('webhook_triggers').selectAll().where('id', '=', id).where('owner', '=', owner).where('workflow_id', '=', workflowId).where('state', '!=', 'disabled').executeTakeFirst();
  }

  /** The owner's triggers of a workflow, each with the time of its latest recorded delivery. */
  async listTriggers(owner: string, workflowId: string): Promise<TriggerRow[]> {
    return this.db
      .selectFrom('webhook_triggers as t')
      .selectAll('t')
      .select((eb) => eb.selectFrom('webhook_deliveries as d').select((e2) => e2.fn.max('d.accepted_at').as('m')).whereRef('d.trigger_id', '=', 't.id').as('latest'))
      .where('t.owner', '=', owner)
      .where('t.workflow_id', '=', workflowId)
      .where('t.state', '!=', 'disabled')
      .orderBy('t.created_at')
      .orderBy('t.id')
      .execute()
      .then((rows) => rows.map(({ latest, ...r }) => ({ ...r, last_delivery_at: (latest as string | null) ?? null })));
  }

  async setSecret(id: string, secretSha256: string): Promise<void> {
    await this.db.updateTable('webhook_triggers').set({ secret_sha256: secretSha256 }).where('id', '=', id).execute();
  }

  /** Deletes a trigger; its audit rows and claims go with it. */
  async deleteTrigger(id: string): Promise<void> {
    await this.db.deleteFrom('webhook_triggers').where('id', '=', id).execute();
    this.sync?.forget(id);
  }

  /** Disables every trigger of a workflow, inside the workflow's delete transaction. */
  async disableForWorkflow(trx: Kysely<any>, owner: string, workflowId: string): Promise<string[]> {
    const t = trx.withTables<Tables>();
    const rows = await t.selectFrom('webhook_triggers').select('id').where('owner', '=', owner).where('workflow_id', '=', workflowId).where('state', '!=', 'disabled').execute();
    if (rows.length > 0) await t.updateTable('webhook_triggers').set({ state: 'disabled' }).where('owner', '=', owner).where('workflow_id', '=', workflowId).execute();
    return rows.map((r) => r.id);
  }

  /**
   * Records a delivery in one transaction: the event-id claim first (unique per trigger; a
   * repeated event id claims nothing and gets the original delivery back), then the audit row
   * in state CLAIMED, the trigger's last delivery time, and the per-trigger audit cap.
   */
  async claim(d: NewDelivery): Promise<ClaimResult> {
    const direct = this.direct();
    if (direct) return direct.claim(d);
    this.sync?.forget(d.triggerId);
    return this.db.transaction().execute(async (trx) => {
      if (d.eventSha256 !== undefined) {
        const inserted = await trx
          .insertInto('webhook_event_claims')
          .values({ trigger_id: d.triggerId, event_sha256: d.eventSha256, delivery_id: d.id, task_id: null, claimed_ms: d.acceptedMs })
          .onConflict((oc) => oc.columns(['trigger_id', 'event_sha256']).doNothing())
          .executeTakeFirst();
        if (Number(inserted.numInsertedOrUpdatedRows ?? 0n) === 0) {
          const existing = await trx.selectFrom('webhook_event_claims').select(['delivery_id', 'task_id']).where('trigger_id', '=', d.triggerId).where('event_sha256', '=', d.eventSha256).executeTakeFirstOrThrow();
          return { claimed: false as const, existing };
        }
      }
      await trx
        .insertInto('webhook_deliveries')
        .values({
          id: d.id,
          trigger_id: d.triggerId,
          state: 'CLAIMED',
          accepted_at: d.acceptedAt,
          accepted_ms: d.acceptedMs,
          completed_at: null,
          duration_ms: null,
          task_id: null,
          idempotency_key_supplied: d.eventSha256 !== undefined ? 1 : 0,
          error_code: null,
          error_message: null,
        })
        .execute();
      const cutoff = await trx.selectFrom('webhook_deliveries').select('seq').where('trigger_id', '=', d.triggerId).orderBy('seq', 'desc').limit(1).offset(MAX_AUDIT_ROWS - 1).executeTakeFirst();
      if (cutoff?.seq !== undefined) await trx.deleteFrom('webhook_deliveries').where('trigger_id', '=', d.triggerId).where('seq', '<', cutoff.seq).execute();
      return { claimed: true as const };
    });
  }

  /** The task was admitted: the audit row and the claim learn its id. */
  async submitted(deliveryId: string, taskId: string, state: DeliveryState, eventClaim?: { triggerId: string; eventSha256: string }): Promise<void> {
    const direct = this.direct();
    if (direct) return direct.submitted(deliveryId, taskId, state, eventClaim);
    await this.db.transaction().execute(async (trx) => {
      await trx.updateTable('webhook_deliveries').set({ task_id: taskId, state }).where('id', '=', deliveryId).where('state', '=', 'CLAIMED').execute();
      if (eventClaim) await trx.updateTable('webhook_event_claims').set({ task_id: taskId }).where('trigger_id', '=', eventClaim.triggerId).where('event_sha256', '=', eventClaim.eventSha256).execute();
    });
  }

  /**
   * Nothing was started (refused for capacity, or the submission failed): the claim is released
   * so the same event id may be retried, and the audit row ends FAILED with the reason.
   */
  async refused(deliveryId: string, error: { code: string; message: string }, completedAt: string, completedMs: number, eventClaim?: { triggerId: string; eventSha256: string }): Promise<void> {
    const direct = this.direct();
    if (direct) return direct.refused(deliveryId, error, completedAt, completedMs, eventClaim);
    await this.db.transaction().execute(async (trx) => {
      if (eventClaim) await trx.deleteFrom('webhook_event_claims').where('trigger_id', '=', eventClaim.triggerId).where('event_sha256', '=', eventClaim.eventSha256).where('delivery_id', '=', deliveryId).execute();
      const row = await trx.selectFrom('webhook_deliveries').select('accepted_ms').where('id', '=', deliveryId).executeTakeFirst();
      if (!row) return;
      await trx
        .updateTable('webhook_deliveries')
        .set({ state: 'FAILED', completed_at: completedAt, duration_ms: Math.max(0, completedMs - row.accepted_ms), error_code: error.code, error_message: error.message })
        .where('id', '=', deliveryId)
        .execute();
    });
  }

  /** A task reached a terminal state: its audit row follows (once). Returns rows changed. */
  async finished(taskId: string, state: DeliveryState, completedAt: string, completedMs: number, error?: { code: string; message: string }): Promise<number> {
    const direct = this.direct();
    if (direct) return direct.finished(taskId, state, completedAt, completedMs, error);
    const row = await this.db.selectFrom('webhook_deliveries').select(['id', 'accepted_ms']).where('task_id', '=', taskId).where(sql.raw<boolean>(OPEN_ROW)).executeTakeFirst();
    if (!row) return 0;
    const res = await this.db
      .updateTable('webhook_deliveries')
      .set({ state, completed_at: completedAt, duration_ms: Math.max(0, completedMs - row.accepted_ms), error_code: error?.code ?? null, error_message: error?.message ?? null })
      .where('id', '=', row.id)
      .where(sql.raw<boolean>(OPEN_ROW))
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  /** A queued task started running. */
  async started(taskId: string): Promise<void> {
    await this.db.updateTable('webhook_deliveries').set({ state: 'SUBMITTED' }).where('task_id', '=', taskId).where(sql.raw<boolean>(OPEN_ROW)).where('state', '=', 'QUEUED').execute();
  }

  /** Claims caught by a stop between claim and submission: INTERRUPTED, never replayed. */
  async interruptClaimed(completedAt: string, completedMs: number, error: { code: string; message: string }): Promise<number> {
    const res = await this.db
      .updateTable('webhook_deliveries')
      .set((eb) => ({ state: 'INTERRUPTED', completed_at: completedAt, duration_ms: eb(eb.val(completedMs), '-', eb.ref('accepted_ms')), error_code: error.code, error_message: error.message }))
      .where('state', '=', 'CLAIMED')
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  /** Deliveries whose task has not been seen to finish, with the owner of each. */
  async open(triggerId?: string): Promise<Array<{ task_id: string; owner: string }>> {
    let q = this.db
      .selectFrom('webhook_deliveries as d')
      .innerJoin('webhook_triggers as t', 't.id', 'd.trigger_id')
      .select(['d.task_id', 't.owner'])
      .where('d.state', 'in', ['QUEUED', 'SUBMITTED'])
      .where('d.task_id', 'is not', null);
    if (triggerId) q = q.where('d.trigger_id', '=', triggerId);
    return (await q.execute()) as Array<{ task_id: string; owner: string }>;
  }

  /** One page of a trigger's audit, newest first, strictly older than `beforeSeq`. */
  async page(triggerId: string, limit: number, beforeSeq?: number): Promise<DeliveryRow[]> {
    let q = this.db.selectFrom('webhook_deliveries').selectAll().where('trigger_id', '=', triggerId);
    if (beforeSeq !== undefined) q = q.where('seq', '<', beforeSeq);
    return (await q.orderBy('seq', 'desc').limit(limit).execute()) as DeliveryRow[];
  }

  async claimOf(triggerId: string, eventSha256: string): Promise<Pick<ClaimRow, 'delivery_id' | 'task_id'> | undefined> {
    return this.db.selectFrom('webhook_event_claims').select(['delivery_id', 'task_id']).where('trigger_id', '=', triggerId).where('event_sha256', '=', eventSha256).executeTakeFirst();
  }

  /**
   * Forgets at most `limit` event ids claimed before `beforeMs`, the oldest first (one statement:
   * the age index picks them, the key deletes them); returns how many. Called again while it
   * returns `limit`.
   */
  async pruneClaims(beforeMs: number, limit: number): Promise<number> {
    const res = await this.db
      .deleteFrom('webhook_event_claims')
      .where((eb) =>
        eb(eb.refTuple('trigger_id', 'event_sha256'), 'in', eb.selectFrom('webhook_event_claims').select(['trigger_id', 'event_sha256']).where('claimed_ms', '<', beforeMs).orderBy('claimed_ms').limit(limit).$asTuple('trigger_id', 'event_sha256')),
      )
      .executeTakeFirst();
    return Number(res.numDeletedRows);
  }
}
