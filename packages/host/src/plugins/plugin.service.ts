import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { compareSemver, FengYuError, type PluginManifest, validateManifest } from '@fengyu/protocol';
import { DEFAULT_OWNER } from '../http/auth';
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import { DEFAULT_LIMITS, extractPackage, type PackageLimits } from './package-reader';
import type { InstalledPlugin, PluginRepository } from './plugin.repository';
import type { WorkerManager } from './worker-manager';
import './plugin-errors';

/**
 * Install, upgrade, enable, disable, uninstall. Layout: `$FENGYU_HOME/plugins/<id>/<version>/`
 * (the extracted package, never written by the worker) and `$FENGYU_HOME/plugin-data/<id>/`
 * (the worker's writable data, kept across upgrades). Installs are serialized.
 */

export interface PluginServiceDeps {
  repo: PluginRepository;
  workers: WorkerManager;
  home: string;
  clock: Clock;
  logger: Logger;
  /** Tool names taken outside the plugins domain (built-ins, MCP, workflows). */
  otherToolNames: () => Promise<string[]>;
  /** Validates a parsed hooks file (the permissions domain's parser); throws on problems. */
  validateHooks?: (pluginId: string, doc: unknown) => void;
  limits?: PackageLimits;
  maxArchiveBytes?: number;
}

export interface InstallOptions {
  bundled?: boolean;
}

export interface HookSource {
  pluginId: string;
  root: string;
  dataDir: string;
  hooksJson: unknown;
}

export class PluginService {
  /** Owners' data directories made since start. */
  private readonly madeDirs = new Set<string>();
  private queue: Promise<unknown> = Promise.resolve();
  private hookSources?: { from: InstalledPlugin[]; value: Promise<HookSource[]>; read?: HookSource[] };

  constructor(private readonly deps: PluginServiceDeps) {}

  list(): Promise<InstalledPlugin[]> {
    return this.deps.repo.list();
  }

  async get(id: string): Promise<InstalledPlugin> {
    const p = await this.deps.repo.get(id);
    if (!p) throw new FengYuError('plugin_not_found', { pluginId: id });
    return p;
  }

  /**
   * A plugin's writable data directory for an owner: the primary owner's under `plugin-data/`,
   * any other owner's under `owners/o_<owner>/plugin-data/` (the prefix keeps names such as `..`
   * a plain directory name).
   */
  dataDirOf(id: string, owner: string = DEFAULT_OWNER): string {
    return owner === DEFAULT_OWNER ? join(this.deps.home, 'plugin-data', id) : join(this.ownersDataRoot(), `o_${owner}`, 'plugin-data', id);
  }

  /** `dataDirOf`, created on first use (an owner's first call of the plugin). */
  async ownerDataDir(id: string, owner: string): Promise<string> {
    const dir = this.dataDirOf(id, owner);
    if (!this.madeDirs.has(dir)) {
      await mkdir(dir, { recursive: true, mode: 0o700 });
      this.madeDirs.add(dir);
    }
    return dir;
  }

  private ownersDataRoot(): string {
    return join(this.deps.home, 'owners');
  }

  /** Installs a `.fyp` from disk, or upgrades the installed plugin of the same id (higher version only). */
  installPackage(file: string, options: InstallOptions = {}): Promise<InstalledPlugin> {
    const run = this.queue.then(() => this.install(file, options));
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async install(file: string, options: InstallOptions): Promise<InstalledPlugin> {
    const max = this.deps.maxArchiveBytes ?? 256 * 1024 * 1024;
    const size = (await stat(file)).size;
    if (size > max) throw new FengYuError('package_too_large', { reason: `${size} bytes (at most ${max})` });
    const pluginsDir = join(this.deps.home, 'plugins');
    const staging = join(pluginsDir, '.staging', randomUUID());
    try {
      const files = await extractPackage(file, staging, this.deps.limits ?? DEFAULT_LIMITS);
      const manifest = await this.checkManifest(staging, new Set(files));
      const previous = await this.deps.repo.get(manifest.id);
      if (previous && compareSemver(manifest.version, previous.version) <= 0) {
        throw new FengYuError('plugin_version_not_higher', { pluginId: manifest.id, installed: previous.version, version: manifest.version });
      }
      const root = join(pluginsDir, manifest.id, manifest.version);
      await rm(root, { recursive: true, force: true });
      await mkdir(join(pluginsDir, manifest.id), { recursive: true });
      await rename(staging, root);
      await mkdir(this.dataDirOf(manifest.id), { recursive: true });
      if (previous) await this.deps.workers.stopPlugin(manifest.id);
      const now = new Date(this.deps.clock.now()).toISOString();
      const plugin: InstalledPlugin = {
        id: manifest.id,
        name: manifest.name,
        version: manifest.version,
        description: manifest.description ?? '',
        enabled: previous?.enabled ?? true,
        manifest,
        root,
        bundled: options.bundled ?? previous?.bundled ?? false,
        installedAt: previous?.installedAt ?? now,
        updatedAt: now,
      };
      await this.deps.repo.put(plugin);
      if (previous && previous.root !== root) await rm(previous.root, { recursive: true, force: true });
      this.deps.logger.info({ plugin: plugin.id, version: plugin.version, upgradedFrom: previous?.version }, previous ? 'plugin upgraded' : 'plugin installed');
      return plugin;
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  private async checkManifest(dir: string, files: Set<string>): Promise<PluginManifest> {
    if (!files.has('manifest.json')) throw new FengYuError('invalid_package', { reason: 'no manifest.json at the root of the package' });
    let json: unknown;
    try {
      json = JSON.parse(await readFile(join(dir, 'manifest.json'), 'utf8'));
    } catch (e) {
      const problems = [{ code: 'manifest_invalid_json', params: { reason: (e as Error).message } }];
      throw new FengYuError('invalid_manifest', { count: 1 }, problems);
    }
    const id = (json as { id?: unknown })?.id;
    const taken = new Set(await this.deps.otherToolNames());
    for (const p of await this.deps.repo.list()) if (p.id !== id) for (const t of p.manifest.aiTools ?? []) taken.add(t.name);
    const checked = validateManifest(json, { existingToolNames: taken, files });
    if (!checked.ok) throw new FengYuError('invalid_manifest', { count: checked.problems.length }, checked.problems);
    const hooksFile = checked.manifest.hooks ?? (files.has('hooks/hooks.json') ? 'hooks/hooks.json' : undefined);
    if (hooksFile) {
      const doc = await this.readHooks(checked.manifest.id, join(dir, hooksFile));
      this.deps.validateHooks?.(checked.manifest.id, doc);
    }
    return checked.manifest;
  }

  private async readHooks(pluginId: string, path: string): Promise<unknown> {
    try {
      return JSON.parse(await readFile(path, 'utf8'));
    } catch (e) {
      throw new FengYuError('invalid_plugin_hooks', { pluginId, reason: (e as Error).message });
    }
  }

  async setEnabled(id: string, enabled: boolean): Promise<InstalledPlugin> {
    await this.get(id);
    await this.deps.repo.setEnabled(id, enabled, new Date(this.deps.clock.now()).toISOString());
    if (!enabled) await this.deps.workers.stopPlugin(id);
    return this.get(id);
  }

  /** Removes the plugin and its install dir; its data dir is kept unless `purgeData`. */
  async uninstall(id: string, purgeData = false): Promise<void> {
    const plugin = await this.get(id);
    await this.deps.workers.stopPlugin(id);
    await this.deps.repo.remove(id);
    await rm(join(this.deps.home, 'plugins', plugin.id), { recursive: true, force: true });
    if (purgeData) {
      await rm(this.dataDirOf(id), { recursive: true, force: true });
      const owners = await readdir(this.ownersDataRoot()).catch(() => [] as string[]);
      for (const o of owners) await rm(join(this.ownersDataRoot(), o, 'plugin-data', id), { recursive: true, force: true });
    }
    this.deps.logger.info({ plugin: id, purgeData }, 'plugin uninstalled');
  }

  /** Hooks files of installed, enabled plugins, for the permissions domain (which owns trust). */
  async listHookSources(): Promise<HookSource[]> {
    const plugins = await this.deps.repo.list();
    // Hooks files change only with the plugin rows (install, upgrade, enable, disable, uninstall).
    if (this.hookSources?.from !== plugins) {
      const entry: NonNullable<PluginService['hookSources']> = { from: plugins, value: this.readHookSources(plugins) };
      entry.value.then((read) => (entry.read = read), () => undefined);
      this.hookSources = entry;
    }
    return this.hookSources.value;
  }

  /** What `listHookSources` would answer, when it is already read for the plugins as they are now; else undefined. */
  hookSourcesNow(): HookSource[] | undefined {
    const plugins = this.deps.repo.listNow();
    return plugins !== undefined && this.hookSources?.from === plugins ? this.hookSources.read : undefined;
  }

  private async readHookSources(plugins: InstalledPlugin[]): Promise<HookSource[]> {
    const out: HookSource[] = [];
    for (const p of plugins) {
      if (!p.enabled) continue;
      const file = join(p.root, p.manifest.hooks ?? 'hooks/hooks.json');
      if (!existsSync(file)) continue;
      try {
        out.push({ pluginId: p.id, root: p.root, dataDir: this.dataDirOf(p.id), hooksJson: JSON.parse(await readFile(file, 'utf8')) });
      } catch (e) {
        this.deps.logger.warn({ plugin: p.id, err: (e as Error).message }, 'plugin hooks file unreadable');
      }
    }
    return out;
  }

  hasHooks(p: InstalledPlugin): boolean {
    return existsSync(join(p.root, p.manifest.hooks ?? 'hooks/hooks.json'));
  }
}
