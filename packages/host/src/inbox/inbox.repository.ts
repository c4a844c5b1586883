import type { InboxItem, InboxItemKind, InboxOutcome, InboxTrigger } from '@fengyu/protocol';
import type Database from 'better-sqlite3';
import type { Kysely } from 'kysely';
import { type Db, statement } from '../storage/database';

/** Rows of `inbox_items` (migration 180): one per gate a run opened, pending until settled. */

export interface InboxRow {
  id: string;
  owner: string;
  run_id: string;
  kind: string;
  step_id: string | null;
  title: string;
  workflow_id: string | null;
  workflow_name: string | null;
  trigger: string;
  created_at: string;
  expires_at: string | null;
  /** JSON: `{form?, plan?, reason?, detail?}`. */
  body: string;
  state: 'pending' | InboxOutcome;
  settled_at: string | null;
}

type Tables = { inbox_items: InboxRow; workflows: { id: string; name: string }; runs: { id: string; origin: string | null; workflow_id: string | null; status: string } };

/** A page's cursor: the last item's creation time and id, base64url (opaque to clients). */
export const inboxCursor = {
  encode: (item: { createdAt: string; id: string }): string => Buffer.from(`${item.createdAt}|${item.id}`).toString('base64url'),
  decode(cursor: string): { createdAt: string; id: string } | undefined {
    const [createdAt, id] = Buffer.from(cursor, 'base64url').toString('utf8').split('|');
    return createdAt && id ? { createdAt, id } : undefined;
  },
};

export function itemOf(row: InboxRow): InboxItem {
  const body = JSON.parse(row.body) as Pick<InboxItem, 'form' | 'plan' | 'reason' | 'detail'>;
  return {
    id: row.id,
    kind: row.kind as InboxItemKind,
    runId: row.run_id,
    ...(row.step_id ? { stepId: row.step_id } : {}),
    title: row.title,
    ...(row.workflow_id ? { workflowId: row.workflow_id } : {}),
    ...(row.workflow_name ? { workflowName: row.workflow_name } : {}),
    trigger: row.trigger as InboxTrigger,
    createdAt: row.created_at,
    ...(row.expires_at ? { expiresAt: row.expires_at } : {}),
    ...body,
  };
}

export function rowOf(owner: string, item: InboxItem): InboxRow {
  const { form, plan, reason, detail } = item;
  return {
    id: item.id,
    owner,
    run_id: item.runId,
    kind: item.kind,
    step_id: item.stepId ?? null,
    title: item.title,
    workflow_id: item.workflowId ?? null,
    workflow_name: item.workflowName ?? null,
    trigger: item.trigger,
    created_at: item.createdAt,
    expires_at: item.expiresAt ?? null,
    body: JSON.stringify({ form, plan, reason, detail }),
    state: 'pending',
    settled_at: null,
  };
}

export class InboxRepository {
  private readonly db: Kysely<Tables>;

  constructor(db: Db) {
    this.db = db.withTables<Tables>();
  }

  private on(trx?: Db): Kysely<Tables> {
    return trx ? trx.withTables<Tables>() : this.db;
  }

  async insert(row: InboxRow, trx?: Db): Promise<void> {
    await this.on(trx).insertInto('inbox_items').values(row).execute();
  }

  /** How the run was started and which workflow it runs. */
  async runFacts(runId: string, trx?: Db): Promise<{ origin: string | null; workflow_id: string | null } | undefined> {
    return this.on(trx).selectFrom('runs').select(['origin', 'workflow_id']).where('id', '=', runId).executeTakeFirst();
  }

  /** Whether the run is over (or gone): its items can no longer be answered. */
  async runEnded(runId: string): Promise<boolean> {
    const row = await this.db.selectFrom('runs').select('status').where('id', '=', runId).executeTakeFirst();
    return !row || ['completed', 'failed', 'cancelled', 'interrupted'].includes(row.status);
  }

  /** The workflow's current name (the item keeps the name it had when the gate opened). */
  async workflowName(id: string, trx?: Db): Promise<string | undefined> {
    const row = await this.on(trx).selectFrom('workflows').select('name').where('id', '=', id).executeTakeFirst();
    return row?.name;
  }

  /** Settles a pending item; false when it was not pending (already settled, or unknown). */
  /** `settle` inside a synchronous SQLite transaction (a run's commit written through prepared statements). */
  settleRaw(raw: Database.Database, id: string, outcome: InboxOutcome, at: string): void {
    statement(raw, "update inbox_items set state = ?, settled_at = ? where id = ? and state = 'pending'").run(outcome, at, id);
  }

  async settle(id: string, outcome: InboxOutcome, at: string, trx?: Db): Promise<boolean> {
    const r = await this.on(trx).updateTable('inbox_items').set({ state: outcome, settled_at: at }).where('id', '=', id).where('state', '=', 'pending').executeTakeFirst();
    return Number(r.numUpdatedRows) > 0;
  }

  /** Cancels every pending item of a run (its end); returns their ids. */
  async cancelRun(runId: string, at: string, trx?: Db): Promise<string[]> {
    const db = this.on(trx);
    const rows = await db.selectFrom('inbox_items').select('id').where('run_id', '=', runId).where('state', '=', 'pending').execute();
    if (rows.length === 0) return [];
    await db.updateTable('inbox_items').set({ state: 'cancelled', settled_at: at }).where('run_id', '=', runId).where('state', '=', 'pending').execute();
    return rows.map((r) => r.id);
  }

  async get(id: string): Promise<InboxRow | undefined> {
    return this.db.selectFrom('inbox_items').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** The owner's pending items, oldest first, after the cursor. */
  async pending(owner: string, limit: number, after?: { createdAt: string; id: string }): Promise<InboxRow[]> {
    let q = this.db.selectFrom('inbox_items').selectAll().where('owner', '=', owner).where('state', '=', 'pending');
    if (after) q = q.where((eb) => eb.or([eb('created_at', '>', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('id', '>', after.id)])]));
    return q.orderBy('created_at').orderBy('id').limit(limit).execute();
  }

  async countPending(owner: string): Promise<number> {
    const r = await this.db.selectFrom('inbox_items').select((eb) => eb.fn.countAll().as('n')).where('owner', '=', owner).where('state', '=', 'pending').executeTakeFirst();
    return Number(r?.n ?? 0);
  }

  /** Every pending item with an expiry, soonest first (the expiry timer's work list). */
  async expiring(limit: number): Promise<InboxRow[]> {
    return this.db.selectFrom('inbox_items').selectAll().where('state', '=', 'pending').where('expires_at', 'is not', null).orderBy('expires_at').limit(limit).execute();
  }

  /** Every pending item (start-up: items whose run did not survive are cancelled). */
  async allPending(): Promise<InboxRow[]> {
    return this.db.selectFrom('inbox_items').selectAll().where('state', '=', 'pending').execute();
  }
}
