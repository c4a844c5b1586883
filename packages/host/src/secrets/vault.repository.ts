import { type Kysely, sql, type Transaction } from 'kysely';
import { type Db, dialectOf } from '../storage/database';

/** Rows of the vault (`secrets`, migration 190): sealed values only, every query scoped by owner. */

export type SecretKind = 'user' | 'internal';

export interface SecretRow {
  owner: string;
  name: string;
  kind: SecretKind;
  value: string;
  key_id: string;
  created_at: string;
  updated_at: string;
}

type Tables = { secrets: SecretRow; settings: { owner: string; doc: string; updated_at: string } };

export class VaultRepository {
  private readonly db: Kysely<Tables>;

  constructor(db: Db) {
    this.db = db.withTables<Tables>();
  }

  /** The key ids sealing the stored values (one, unless a rotation was cut short). */
  async keyIds(): Promise<string[]> {
    const rows = await this.db.selectFrom('secrets').select('key_id').distinct().execute();
    return rows.map((r) => r.key_id);
  }

  async sample(keyId: string): Promise<SecretRow | undefined> {
    return this.db.selectFrom('secrets').selectAll().where('key_id', '=', keyId).limit(1).executeTakeFirst();
  }

  async ofOwner(owner: string, kind: SecretKind): Promise<SecretRow[]> {
    return this.db.selectFrom('secrets').selectAll().where('owner', '=', owner).where('kind', '=', kind).orderBy('name').execute();
  }

  async allOfKind(kind: SecretKind): Promise<SecretRow[]> {
    return this.db.selectFrom('secrets').selectAll().where('kind', '=', kind).execute();
  }

  async all(trx?: Transaction<Tables>): Promise<SecretRow[]> {
    return (trx ?? this.db).selectFrom('secrets').selectAll().execute();
  }

  /** Inserts or replaces one value; the creation time of an existing row is kept. */
  async upsert(row: SecretRow, trx?: Transaction<Tables>): Promise<void> {
    await (trx ?? this.db)
      .insertInto('secrets')
      .values(row)
      .onConflict((oc) => oc.columns(['owner', 'name']).doUpdateSet({ value: row.value, key_id: row.key_id, kind: row.kind, updated_at: row.updated_at }))
      .execute();
  }

  async remove(owner: string, name: string, trx?: Transaction<Tables>): Promise<boolean> {
    const r = await (trx ?? this.db).deleteFrom('secrets').where('owner', '=', owner).where('name', '=', name).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** Removes an owner's internal values whose names start with `prefix` (one domain's). */
  async removePrefix(owner: string, prefix: string, trx?: Transaction<Tables>): Promise<void> {
    await (trx ?? this.db).deleteFrom('secrets').where('owner', '=', owner).where('kind', '=', 'internal').where('name', 'like', `${prefix}%`).execute();
  }

  async reseal(owner: string, name: string, value: string, keyId: string, trx: Transaction<Tables>): Promise<void> {
    await trx.updateTable('secrets').set({ value, key_id: keyId }).where('owner', '=', owner).where('name', '=', name).execute();
  }

  /** Every owner's settings document as stored (the move of clear copies reads them once). */
  async settingsDocs(): Promise<Array<{ owner: string; doc: string }>> {
    return this.db.selectFrom('settings').select(['owner', 'doc']).execute();
  }

  async rewriteSettingsDoc(owner: string, doc: string): Promise<void> {
    await this.db.updateTable('settings').set({ doc }).where('owner', '=', owner).execute();
  }

  /** SQLite: rewrites the file without its free pages and empties the WAL, so a deleted clear copy is gone from disk. */
  async compact(): Promise<void> {
    if (dialectOf(this.db) !== 'sqlite') return;
    await sql`vacuum`.execute(this.db);
    await sql`pragma wal_checkpoint(truncate)`.execute(this.db);
  }

  transaction<T>(fn: (trx: Transaction<Tables>) => Promise<T>): Promise<T> {
    return this.db.transaction().execute(fn);
  }
}
