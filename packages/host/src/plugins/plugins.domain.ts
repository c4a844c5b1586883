import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { FengYuError } from '@fengyu/protocol';
import type { FilesResolver } from '../agent/agent.service';
import { FileService } from '../files/file.service';
import { type RunFileEntry, resolveRunFiles } from '../files/run-files';
import { parsePluginHooks } from '../permissions/hook-config';
import type { PluginHookProvider, PluginHookSet } from '../permissions/types';
import { processGroupsFor } from '../process/spawn';
import type { CoreServices } from '../services';
import type { ToolCatalog } from '../tools/catalog';
import { type Db, dialectOf } from '../storage/database';
import { installBundledPlugins } from './bundled-plugins';
import { DEFAULT_OWNER } from '../http/auth';
import { type InstalledPlugin, PluginRepository } from './plugin.repository';
import { pluginSecretsHandler } from './plugin-secrets';
import { type HookSource, PluginService } from './plugin.service';
import { PluginToolSource, workerTargetOf } from './plugin-tool-source';
import type { SandboxPosture } from './posture';
import { sandboxFor } from './sandbox';
import { WorkerManager } from './worker-manager';
import { callTimeoutOf } from '../settings/backend.section';

/**
 * The plugins domain's services: sandbox posture, worker manager, the plugin tool source, the
 * provider of trusted plugin hooks (for the guard), uploads, run file grants, and the bundled
 * plugins (installed at start).
 */

export interface PluginsDomain {
  service: PluginService;
  workers: WorkerManager;
  files: FileService;
  /** How plugins are isolated on this host (recorded on every run). */
  posture: SandboxPosture;
  /** Plugin hooks the owner trusted, for the permission guard. */
  hooks: PluginHookProvider;
  /** Resolves a run's `files` entries to grants (runs and chat attachments). */
  resolveFiles: FilesResolver;
  /**
   * Calls a method of an installed, enabled plugin on the host's own behalf (no run, no grants):
   * as `owner` (that owner's plugin data and secrets), e.g. the inbox's e-mail notifications. Throws `plugin_not_found` / `plugin_disabled`.
   */
  callMethod(owner: string, pluginId: string, method: string, params: Record<string, unknown>, timeoutSeconds?: number): Promise<unknown>;
}

export const MAX_PACKAGE_BYTES = 256 * 1024 * 1024;

/** Names taken by non-plugin tools; bounded in time (a slow MCP server must not block installs). */
async function otherToolNames(catalog: ToolCatalog): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), 5000);
  });
  const snapshot = await Promise.race([catalog.snapshot('default'), timeout]).finally(() => clearTimeout(timer));
  return (snapshot?.tools ?? []).filter((t) => t.source !== 'plugin').map((t) => t.name);
}

function hookProvider(service: PluginService, logger: CoreServices['logger']): PluginHookProvider {
  // Parsed once per hook-source list: the service hands out the same list until a plugin is
  // installed, upgraded, enabled, disabled or uninstalled (the guard asks on every tool call).
  let parsed: { from: HookSource[]; sets: PluginHookSet[] } | undefined;
  return {
    trustedHooks: async () => {
      const sources = await service.listHookSources();
      if (parsed?.from === sources) return parsed.sets;
      const sets: PluginHookSet[] = [];
      for (const s of sources) {
        try {
          sets.push({ pluginId: s.pluginId, root: s.root, dataDir: s.dataDir, hooks: parsePluginHooks(s.pluginId, s.hooksJson) });
        } catch (err) {
          logger.warn({ plugin: s.pluginId, err }, 'plugin hooks invalid; skipped');
        }
      }
      parsed = { from: sources, sets };
      return sets;
    },
    trustedHooksNow: () => {
      const sources = service.hookSourcesNow();
      return sources !== undefined && parsed?.from === sources ? parsed.sets : undefined;
    },
  };
}

type PluginsDeps = Pick<CoreServices, 'config' | 'logger' | 'clock' | 'db' | 'catalog' | 'onClose' | 'crashPoint' | 'settings' | 'vault'>;

/** Builds the domain and installs the bundled plugins (leftovers of a crashed install removed first). */
export async function createPluginsDomain(core: PluginsDeps): Promise<PluginsDomain> {
  const backend = sandboxFor(core.config);
  const logger = core.logger.child({ component: 'plugins' });
  const workers = new WorkerManager({ backend, logger, env: core.config.env, onWorkerRequest: pluginSecretsHandler(core.vault), groups: processGroupsFor(core.config, (fn) => core.onClose(fn)), ...(core.crashPoint ? { crashPoint: core.crashPoint } : {}) });
  core.onClose(() => workers.close());
  const repo = new PluginRepository(core.db);
  const service = new PluginService({
    repo,
    workers,
    home: core.config.home,
    clock: core.clock,
    logger,
    maxArchiveBytes: MAX_PACKAGE_BYTES,
    validateHooks: (id, doc) => void parsePluginHooks(id, doc),
    otherToolNames: () => otherToolNames(core.catalog),
  });
  core.catalog.register(
    new PluginToolSource({ plugins: () => repo.list(), pluginsNow: () => repo.listNow(), current: installedNow(core.db, repo), currentNow: installedKnown(core.db, repo), workers, dataDirOf: (id) => service.dataDirOf(id), ownerDataDir: (id, owner) => service.ownerDataDir(id, owner), defaultTimeoutSeconds: callTimeoutOf(core.settings, core.config.callTimeoutSeconds) }),
  );
  const resolveFiles: FilesResolver = async (owner, runId, entries) => {
    const grants = await resolveRunFiles(core, owner, runId, entries as RunFileEntry[]);
    return { grants, names: [...new Set(grants.map((g) => g.name))] };
  };
  for (const dir of ['.staging', '.uploads']) await rm(join(core.config.home, 'plugins', dir), { recursive: true, force: true });
  await installBundledPlugins(service, core.config.bundledPluginDirs, core.config.home, core.logger);
  const current = installedNow(core.db, repo);
  const callMethod: PluginsDomain['callMethod'] = async (owner, pluginId, method, params, timeoutSeconds = 60) => {
    const p = await current(pluginId);
    if (!p) throw new FengYuError('plugin_not_found', { pluginId });
    if (!p.enabled) throw new FengYuError('plugin_disabled', { pluginId });
    const target = owner === DEFAULT_OWNER ? workerTargetOf(p, service.dataDirOf(p.id)) : { ...workerTargetOf(p, await service.ownerDataDir(p.id, owner)), owner };
    return workers.invoke({ target, method, params, toolName: `${pluginId}:${method}`, timeoutSeconds, grants: [] });
  };
  return { service, workers, files: new FileService(core.db, core.config.home, core.clock), posture: backend.posture, hooks: hookProvider(service, logger), resolveFiles, callMethod };
}

/**
 * The plugin as installed now, at each call of its tool. One host writes its own SQLite file, so
 * the repository's list (refreshed by every write) is current; a shared database may be changed
 * by another host process, so there each call reads the row.
 */
function installedNow(db: Db, repo: PluginRepository): (id: string) => Promise<InstalledPlugin | undefined> {
  if (dialectOf(db) === 'postgres') return (id) => repo.get(id);
  return async (id) => (await repo.list()).find((p) => p.id === id);
}

/** `installedNow` answered from the list already read (SQLite only; null: not installed), else undefined. */
function installedKnown(db: Db, repo: PluginRepository): ((id: string) => InstalledPlugin | null | undefined) | undefined {
  if (dialectOf(db) === 'postgres') return undefined;
  return (id) => {
    const list = repo.listNow();
    return list ? (list.find((p) => p.id === id) ?? null) : undefined;
  };
}
