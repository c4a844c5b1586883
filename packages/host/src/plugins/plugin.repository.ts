import type { PluginManifest } from '@fengyu/protocol';
import type { Kysely } from 'kysely';
import type { Db } from '../storage/database';

/** The `plugins` table: one row per installed plugin (its active version). */

export interface PluginRow {
  id: string;
  name: string;
  version: string;
  description: string;
  enabled: number;
  manifest: string;
  root: string;
  bundled: number;
  installed_at: string;
  updated_at: string;
}

export interface InstalledPlugin {
  id: string;
  name: string;
  version: string;
  description: string;
  enabled: boolean;
  manifest: PluginManifest;
  /** The install directory `$FENGYU_HOME/plugins/<id>/<version>`. */
  root: string;
  bundled: boolean;
  installedAt: string;
  updatedAt: string;
}

type Tables = {
  plugins: PluginRow;
};

const toPlugin = (r: PluginRow): InstalledPlugin => ({
  id: r.id,
  name: r.name,
  version: r.version,
  description: r.description,
  enabled: r.enabled === 1,
  manifest: JSON.parse(r.manifest) as PluginManifest,
  root: r.root,
  bundled: r.bundled === 1,
  installedAt: r.installed_at,
  updatedAt: r.updated_at,
});

export class PluginRepository {
  private readonly db: Kysely<Tables>;
  private cached?: Promise<InstalledPlugin[]>;
  /** The list `cached` resolved to (valid only while `cached` is still that promise). */
  private resolved?: { from: Promise<InstalledPlugin[]>; list: InstalledPlugin[] };

  constructor(db: Db) {
    this.db = db.withTables<Tables>();
  }

  /**
   * Every installed plugin, read once and kept until a write (install, upgrade, enable, disable,
   * uninstall all go through this repository). The same array is returned until then: callers
   * never mutate it, and may use its identity to cache what they derive from it.
   */
  list(): Promise<InstalledPlugin[]> {
    this.cached ??= this.db
      .selectFrom('plugins')
      .selectAll()
      .orderBy('id')
      .execute()
      .then((rows) => rows.map(toPlugin));
    const pending = this.cached;
    if (this.resolved?.from !== pending)
      pending.then(
        (list) => {
          if (this.cached === pending) this.resolved = { from: pending, list };
        },
        () => {
          if (this.cached === pending) this.cached = undefined;
        },
      );
    return pending;
  }

  /**
   * The list `list()` would answer, when it is already read and no write happened since;
   * undefined otherwise (the caller then awaits `list()`). Lets a hot path skip a promise turn.
   */
  listNow(): InstalledPlugin[] | undefined {
    const r = this.resolved;
    return r && r.from === this.cached ? r.list : undefined;
  }

  async get(id: string): Promise<InstalledPlugin | undefined> {
    const row = await this.db.selectFrom('plugins').selectAll().where('id', '=', id).executeTakeFirst();
    return row ? toPlugin(row) : undefined;
  }

  /** Inserts or replaces the row of `plugin.id` (install and upgrade). */
  async put(p: InstalledPlugin): Promise<void> {
    const row: PluginRow = {
      id: p.id,
      name: p.name,
      version: p.version,
      description: p.description,
      enabled: p.enabled ? 1 : 0,
      manifest: JSON.stringify(p.manifest),
      root: p.root,
      bundled: p.bundled ? 1 : 0,
      installed_at: p.installedAt,
      updated_at: p.updatedAt,
    };
    this.cached = undefined;
    await this.db
      .insertInto('plugins')
      .values(row)
      .onConflict((oc) => oc.column('id').doUpdateSet({ ...row, installed_at: undefined }))
      .execute();
    this.cached = undefined;
  }

  async setEnabled(id: string, enabled: boolean, at: string): Promise<boolean> {
    this.cached = undefined;
    const r = await this.db.updateTable('plugins').set({ enabled: enabled ? 1 : 0, updated_at: at }).where('id', '=', id).executeTakeFirst();
    this.cached = undefined;
    return Number(r.numUpdatedRows) > 0;
  }

  async remove(id: string): Promise<boolean> {
    this.cached = undefined;
    const r = await this.db.deleteFrom('plugins').where('id', '=', id).executeTakeFirst();
    this.cached = undefined;
    return Number(r.numDeletedRows) > 0;
  }
}
