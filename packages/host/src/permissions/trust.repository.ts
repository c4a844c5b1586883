import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { FengYuError } from '@fengyu/protocol';
import type { Kysely } from 'kysely';
import type { Clock } from '../clock';
import type { Db } from '../storage/database';

/**
 * The trust state of plugin hooks (table `plugin_hook_trusts`): per owner, and bound to the
 * installed package. The binding is a digest of the plugin id, its install time and every
 * installed file, so an upgrade, a reinstall or a changed file voids the trust and the owner is
 * asked again. Only an installed plugin can be trusted.
 */

type Tables = {
  plugin_hook_trusts: { owner: string; plugin_id: string; binding: string; trusted_at: string };
  plugins: { id: string; root: string; installed_at: string; updated_at: string };
};

export interface TrustRecord {
  pluginId: string;
  trustedBy: string;
  trustedAt: string;
  /** False when the plugin changed (or was removed) since it was trusted: its hooks do not run. */
  current: boolean;
}

/** Digest of a directory tree: every regular file's relative path and bytes, in path order. */
async function treeDigest(root: string): Promise<string> {
  const files: string[] = [];
  const walk = async (dir: string) => {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.isFile()) files.push(p);
    }
  };
  await walk(root);
  files.sort();
  const h = createHash('sha256');
  for (const f of files) {
    h.update(relative(root, f)).update('\0');
    h.update(createHash('sha256').update(await readFile(f)).digest('hex')).update('\0');
  }
  return h.digest('hex');
}

export class PluginHookTrustRepository {
  private readonly db: Kysely<Tables>;
  /** Tree digests by `root|updated_at` (an install or upgrade changes both). */
  private readonly digests = new Map<string, Promise<string>>();

  constructor(
    db: Db,
    private readonly clock: Clock,
  ) {
    this.db = db.withTables<Tables>();
  }

  /** The current binding of an installed plugin, or undefined when it is not installed. */
  async bindingOf(pluginId: string): Promise<string | undefined> {
    const row = await this.db.selectFrom('plugins').select(['id', 'root', 'installed_at', 'updated_at']).where('id', '=', pluginId).executeTakeFirst();
    if (!row) return undefined;
    const key = `${row.root}|${row.updated_at}`;
    let tree = this.digests.get(key);
    if (!tree) {
      tree = treeDigest(row.root).catch(() => 'unreadable');
      if (this.digests.size > 256) this.digests.clear();
      this.digests.set(key, tree);
    }
    return createHash('sha256').update(`${row.id}\0${row.installed_at}\0${await tree}`).digest('hex');
  }

  /** Trusts the plugin's hooks for `owner`, bound to the package as installed now; 404 when not installed. */
  async trust(pluginId: string, owner: string): Promise<TrustRecord> {
    const binding = await this.bindingOf(pluginId);
    if (!binding) throw new FengYuError('plugin_not_found', { pluginId });
    const trustedAt = new Date(this.clock.now()).toISOString();
    await this.db
      .insertInto('plugin_hook_trusts')
      .values({ owner, plugin_id: pluginId, binding, trusted_at: trustedAt })
      .onConflict((oc) => oc.columns(['owner', 'plugin_id']).doUpdateSet({ binding, trusted_at: trustedAt }))
      .execute();
    return { pluginId, trustedBy: owner, trustedAt, current: true };
  }

  /** True when a row was removed. */
  async untrust(pluginId: string, owner: string): Promise<boolean> {
    const res = await this.db.deleteFrom('plugin_hook_trusts').where('plugin_id', '=', pluginId).where('owner', '=', owner).executeTakeFirst();
    return Number(res.numDeletedRows) > 0;
  }

  /** Plugins whose hooks run for `owner`: trusted by that owner and unchanged since. */
  async trustedIds(owner: string): Promise<Set<string>> {
    return new Set((await this.list(owner)).filter((r) => r.current).map((r) => r.pluginId));
  }

  async list(owner: string): Promise<TrustRecord[]> {
    const rows = await this.db.selectFrom('plugin_hook_trusts').selectAll().where('owner', '=', owner).orderBy('plugin_id').execute();
    const out: TrustRecord[] = [];
    for (const r of rows) out.push({ pluginId: r.plugin_id, trustedBy: r.owner, trustedAt: r.trusted_at, current: (await this.bindingOf(r.plugin_id)) === r.binding });
    return out;
  }
}
