import type { PermissionMode, ScheduleState } from '@fengyu/protocol';
import type { Kysely, Transaction } from 'kysely';
import { sql } from 'kysely';
import type { Db } from '../storage/database';

/** Schedule rows (table of migration 060). Every state change is one conditional write. */

export type { ScheduleState };

export interface ScheduleRow {
  id: string;
  owner: string;
  workflow_id: string;
  /** JSON of the Recurrence. */
  recurrence: string;
  /** Written only from a validated create body. */
  permission_mode: PermissionMode;
  /** JSON object. */
  inputs: string;
  /** JSON `ScheduleFile[]`: the kept copies of its file inputs' uploads (null: none). */
  files?: string | null;
  created_at: string;
  anchor_ms: number;
  next_run_ms: number | null;
  expires_ms: number | null;
  trigger_count: number;
  missed_fires: number;
  /** JSON `{code, params, at}`. */
  last_error: string | null;
  last_task_id: string | null;
  state: ScheduleState;
  paused_reason: string | null;
  sandboxed: number;
  claim_ms: number | null;
  claimed_at_ms: number | null;
  updated_at: string;
}

/** The state of a schedule that has never fired: active, no fires, misses, errors or claims. */
export const NEVER_FIRED = {
  trigger_count: 0,
  missed_fires: 0,
  last_error: null,
  last_task_id: null,
  state: 'active',
  paused_reason: null,
  claim_ms: null,
  claimed_at_ms: null,
} as const satisfies Partial<ScheduleRow>;

type Tables = { schedules: ScheduleRow };

/** What a recorded error holds: a stable code and its message parameters (localized on read). */
export interface RecordedError {
  code: string;
  params: Record<string, unknown>;
  at: string;
}

/** The write that claims an occurrence: where the row goes once it has been claimed. */
export interface ClaimPatch {
  nextRunMs: number | null;
  state: ScheduleState;
  /** Overdue boundaries folded into this fire (not run). */
  missed: number;
  claimMs: number;
  at: number;
}

export class ScheduleRepository {
  private readonly db: Kysely<Tables>;

  constructor(db: Db) {
    this.db = db.withTables<Tables>();
  }

  /** Runs `fn` in a transaction (creation counts the owner's schedules and inserts atomically). */
  transaction<T>(fn: (trx: Transaction<Tables>) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(fn);
  }

  async countLive(owner: string, trx?: Transaction<Tables>): Promise<number> {
    const r = await (trx ?? this.db)
      .selectFrom('schedules')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('owner', '=', owner)
      .where('state', 'in', ['active', 'paused'])
      .executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  async insert(row: ScheduleRow, trx?: Transaction<Tables>): Promise<void> {
    await (trx ?? this.db).insertInto('schedules').values(row).execute();
  }

  async get(owner: string, id: string): Promise<ScheduleRow | undefined> {
    return this.db.selectFrom('schedules').selectAll().where('id', '=', id).where('owner', '=', owner).executeTakeFirst();
  }

  async byId(id: string): Promise<ScheduleRow | undefined> {
    return this.db.selectFrom('schedules').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The owner's schedules, newest first; `cursor` is the last id of the previous page. */
  async list(owner: string, limit: number, after?: { createdAt: string; id: string }): Promise<ScheduleRow[]> {
    let q = this.db.selectFrom('schedules').selectAll().where('owner', '=', owner);
    if (after) q = q.where((eb) => eb.or([eb('created_at', '<', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '<', after.id)])]));
    return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
  }

  async delete(owner: string, id: string): Promise<boolean> {
    const res = await this.db.deleteFrom('schedules').where('id', '=', id).where('owner', '=', owner).executeTakeFirst();
    return Number(res.numDeletedRows) === 1;
  }

  /** Active schedules whose next fire is at or before `now`, earliest first. */
  async due(now: number): Promise<ScheduleRow[]> {
    return this.db.selectFrom('schedules').selectAll().where('state', '=', 'active').where('claim_ms', 'is', null).where('next_run_ms', '<=', now).orderBy('next_run_ms').execute();
  }

  /** The earliest next fire of any active schedule. */
  async earliest(): Promise<number | undefined> {
    const r = await this.db.selectFrom('schedules').select((eb) => eb.fn.min('next_run_ms').as('t')).where('state', '=', 'active').where('claim_ms', 'is', null).executeTakeFirst();
    return r?.t === null || r?.t === undefined ? undefined : Number(r.t);
  }

  /**
   * Claims the occurrence due at `expectedNext`: advances `next_run_ms`, folds overdue
   * boundaries into `missed_fires` and records the claim, in one write that succeeds only if the
   * row is still active, unclaimed and due at `expectedNext`. False when it was not (deleted,
   * paused, disabled or claimed meanwhile): nothing may be submitted then.
   */
  async claim(id: string, expectedNext: number, p: ClaimPatch): Promise<boolean> {
    const res = await this.db
      .updateTable('schedules')
      .set({
        next_run_ms: p.nextRunMs,
        state: p.state,
        missed_fires: sql`missed_fires + ${p.missed}`,
        claim_ms: p.claimMs,
        claimed_at_ms: p.at,
        updated_at: new Date(p.at).toISOString(),
      })
      .where('id', '=', id)
      .where('state', '=', 'active')
      .where('claim_ms', 'is', null)
      .where('next_run_ms', '=', expectedNext)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** The claimed occurrence was submitted: counted, and the claim released. */
  async fired(id: string, taskId: string, at: number): Promise<void> {
    await this.db
      .updateTable('schedules')
      .set({ trigger_count: sql`trigger_count + 1`, last_task_id: taskId, claim_ms: null, claimed_at_ms: null, updated_at: new Date(at).toISOString() })
      .where('id', '=', id)
      .execute();
  }

  /** The claimed occurrence did not run: counted as missed, the error recorded, the claim released. */
  async missed(id: string, error: RecordedError, at: number, state?: ScheduleState): Promise<void> {
    await this.db
      .updateTable('schedules')
      .set({
        missed_fires: sql`missed_fires + 1`,
        last_error: JSON.stringify(error),
        claim_ms: null,
        claimed_at_ms: null,
        updated_at: new Date(at).toISOString(),
        ...(state ? { state, next_run_ms: null } : {}),
      })
      .where('id', '=', id)
      .execute();
  }

  /** Claims left by a process that stopped between the claim and its outcome. */
  async openClaims(): Promise<ScheduleRow[]> {
    return this.db.selectFrom('schedules').selectAll().where('claim_ms', 'is not', null).execute();
  }

  /** An active schedule past its expiry that never fired its last boundaries: expired, counted. */
  async expireUnfired(id: string, expectedNext: number, missed: number, error: RecordedError, at: number): Promise<boolean> {
    const res = await this.db
      .updateTable('schedules')
      .set({ state: 'expired', next_run_ms: null, missed_fires: sql`missed_fires + ${missed}`, last_error: JSON.stringify(error), updated_at: new Date(at).toISOString() })
      .where('id', '=', id)
      .where('state', '=', 'active')
      .where('claim_ms', 'is', null)
      .where('next_run_ms', '=', expectedNext)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** Pauses every active schedule created under sandboxing (the host now runs unsandboxed). */
  async pauseSandboxed(reason: string, at: number): Promise<number> {
    const res = await this.db
      .updateTable('schedules')
      .set({ state: 'paused', paused_reason: reason, updated_at: new Date(at).toISOString() })
      .where('state', '=', 'active')
      .where('sandboxed', '=', 1)
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }

  async pausedFor(reason: string): Promise<ScheduleRow[]> {
    return this.db.selectFrom('schedules').selectAll().where('state', '=', 'paused').where('paused_reason', '=', reason).execute();
  }

  /** Resumes a schedule paused for `reason`, with its next fire recomputed from now. */
  async resume(id: string, reason: string, nextRunMs: number | null, state: ScheduleState, at: number): Promise<boolean> {
    const res = await this.db
      .updateTable('schedules')
      .set({ state, paused_reason: null, next_run_ms: nextRunMs, updated_at: new Date(at).toISOString() })
      .where('id', '=', id)
      .where('state', '=', 'paused')
      .where('paused_reason', '=', reason)
      .executeTakeFirst();
    return Number(res.numUpdatedRows) === 1;
  }

  /** Disables the workflow's live schedules, inside the caller's transaction (workflow deletion). */
  async disableForWorkflow(trx: Transaction<any>, owner: string, workflowId: string, error: RecordedError, at: number): Promise<number> {
    const res = await trx
      .withTables<Tables>()
      .updateTable('schedules')
      .set({ state: 'disabled', paused_reason: null, next_run_ms: null, last_error: JSON.stringify(error), updated_at: new Date(at).toISOString() })
      .where('owner', '=', owner)
      .where('workflow_id', '=', workflowId)
      .where('state', 'in', ['active', 'paused'])
      .executeTakeFirst();
    return Number(res.numUpdatedRows);
  }
}
