import type { Kysely } from 'kysely';
import type { Clock } from '../clock';
import type { Db } from '../storage/database';

/** The trust state of plugin hooks (table `plugin_hook_trust`, migration 020). */

type Tables = {
  plugin_hook_trust: { plugin_id: string; trusted_by: string; trusted_at: string };
};

export interface TrustRecord {
  pluginId: string;
  trustedBy: string;
  trustedAt: string;
}

export class PluginHookTrustRepository {
  private readonly db: Kysely<Tables>;

  constructor(
    db: Db,
    private readonly clock: Clock,
  ) {
    this.db = db.withTables<Tables>();
  }

  async trust(pluginId: string, owner: string): Promise<TrustRecord> {
    const trustedAt = new Date(this.clock.now()).toISOString();
    await this.db
      .insertInto('plugin_hook_trust')
      .values({ plugin_id: pluginId, trusted_by: owner, trusted_at: trustedAt })
      .onConflict((oc) => oc.column('plugin_id').doUpdateSet({ trusted_by: owner, trusted_at: trustedAt }))
      .execute();
    return { pluginId, trustedBy: owner, trustedAt };
  }

  /** True when a row was removed. */
  async untrust(pluginId: string): Promise<boolean> {
    const res = await this.db.deleteFrom('plugin_hook_trust').where('plugin_id', '=', pluginId).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  async trustedIds(): Promise<Set<string>> {
    const rows = await this.db.selectFrom('plugin_hook_trust').select('plugin_id').execute();
    return new Set(rows.map((r) => r.plugin_id));
  }

  async list(): Promise<TrustRecord[]> {
    const rows = await this.db.selectFrom('plugin_hook_trust').selectAll().orderBy('plugin_id').execute();
    return rows.map((r) => ({ pluginId: r.plugin_id, trustedBy: r.trusted_by, trustedAt: r.trusted_at }));
  }
}
