import { type Kysely, sql, type Transaction } from 'kysely';
import { type Db, dialectOf, rawOf, statement } from '../storage/database';

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

type Tables = {
  secrets: SecretRow;
  settings: { owner: string; doc: string; updated_at: string };
  secret_versions: { owner: string; scope: string; version: number };
};

/** One value inserted or replaced (the creation time of an existing row kept), as `upsert` does. */
const UPSERT_ONE =
  'insert into secrets (owner, name, kind, value, key_id, created_at, updated_at) values (?, ?, ?, ?, ?, ?, ?) on conflict (owner, name) do update set value = excluded.value, key_id = excluded.key_id, kind = excluded.kind, updated_at = excluded.updated_at';

export class VaultRepository {
  private readonly db: Kysely<Tables>;

  constructor(private readonly root: Db) {
    this.db = root.withTables<Tables>();
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

  /** The owner's internal values whose names start with one of `prefixes` (one holder's). */
  async internalUnder(owner: string, prefixes: readonly string[]): Promise<SecretRow[]> {
    if (prefixes.length === 0) return [];
    return this.db
      .selectFrom('secrets')
      .selectAll()
      .where('owner', '=', owner)
      .where('kind', '=', 'internal')
      .where((eb) => eb.or(prefixes.map((p) => eb('name', 'like', `${p}%`))))
      .execute();
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

  /** Inserts or replaces values in another domain's transaction (a holder's row and its sealed values commit together). */
  async upsertIn(trx: Db, rows: readonly SecretRow[]): Promise<void> {
    for (const row of rows) await this.upsert(row, trx as Transaction<Tables>);
  }

  /**
   * SQLite: the same, synchronously, inside the transaction the caller holds open on the host's
   * connection (a producer's own transaction); throws when none is open, so nothing commits alone.
   */
  upsertWithin(rows: readonly SecretRow[]): void {
    const raw = rawOf(this.root);
    if (!raw?.inTransaction) throw new Error('upsertWithin needs an open transaction on the SQLite connection');
    const one = statement(raw, UPSERT_ONE);
    for (const r of rows) one.run(r.owner, r.name, r.kind, r.value, r.key_id, r.created_at, r.updated_at);
  }

  async remove(owner: string, name: string, trx?: Transaction<Tables>): Promise<boolean> {
    const r = await (trx ?? this.db).deleteFrom('secrets').where('owner', '=', owner).where('name', '=', name).executeTakeFirst();
    return Number(r.numDeletedRows) > 0;
  }

  /** Removes an owner's internal values whose names start with `prefix` (one domain's). */
  async removePrefix(owner: string, prefix: string, trx?: Transaction<Tables>): Promise<void> {
    await (trx ?? this.db).deleteFrom('secrets').where('owner', '=', owner).where('kind', '=', 'internal').where('name', 'like', `${prefix}%`).execute();
  }

  /** The counters of the owner's scopes (`secret_versions`, migration 340); a scope never written is absent. */
  async versions(owner: string): Promise<Map<string, number>> {
    const rows = await this.db.selectFrom('secret_versions').select(['scope', 'version']).where('owner', '=', owner).execute();
    return new Map(rows.map((r) => [r.scope, Number(r.version)]));
  }

  /** Moves the counters of the owner's scopes on, in the transaction that writes their values. */
  async bump(owner: string, scopes: readonly string[], trx: Transaction<Tables>): Promise<void> {
    for (const scope of scopes) {
      await trx
        .insertInto('secret_versions')
        .values({ owner, scope, version: 1 })
        .onConflict((oc) => oc.columns(['owner', 'scope']).doUpdateSet({ version: sql`secret_versions.version + 1` }))
        .execute();
    }
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
