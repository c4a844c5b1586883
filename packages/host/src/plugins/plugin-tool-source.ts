import { type AiTool, clampTimeout, FengYuError, type JsonSchema, stableHash } from '@fengyu/protocol';
import { DEFAULT_OWNER } from '../http/auth';
import type { SourceStatus, Tool, ToolContext, ToolSource } from '../tools/tool';
import type { InstalledPlugin } from './plugin.repository';
import { resolveRefs } from './resolve-refs';
import type { WorkerManager, WorkerTarget } from './worker-manager';

/**
 * Every installed plugin's aiTools as catalog `Tool`s (id `pluginId:toolName`). A disabled
 * plugin's tools stay in the catalog marked unavailable, so drafts that use them still open and
 * save (with a diagnostic) while runs, publication and the model refuse them. Derived from the
 * repository's plugin list, which every install / upgrade / enable / disable / uninstall
 * refreshes, so they show up in the next catalog or run without a restart.
 */

export interface PluginToolDeps {
  plugins: () => Promise<InstalledPlugin[]>;
  /** The list `plugins` would answer, when it is already read and unchanged since; else undefined. */
  pluginsNow?: () => InstalledPlugin[] | undefined;
  /** The plugin as installed now (a run's snapshot may outlive a disable or an upgrade). */
  current?: (pluginId: string) => Promise<InstalledPlugin | undefined>;
  /**
   * The same answer as `current` when it is known without waiting (null: not installed), else
   * undefined. A call answered here reaches its worker in the same turn, before its caller goes on.
   */
  currentNow?: (pluginId: string) => InstalledPlugin | null | undefined;
  workers: WorkerManager;
  /** A plugin's data directory for the primary owner. */
  dataDirOf: (pluginId: string) => string;
  /** Another owner's data directory of a plugin, made on first use (each owner's workers keep their own state). */
  ownerDataDir: (pluginId: string, owner: string) => Promise<string>;
  /** The owner's `backend.callTimeoutSeconds`, for a tool that declares no timeout. */
  defaultTimeoutSeconds: (owner: string) => number | Promise<number>;
}

/** A worker result `{success: false, error}` is a failed call. */
function failedResult(result: unknown): string | undefined {
  if (!result || typeof result !== 'object' || (result as { success?: unknown }).success !== false) return undefined;
  const error = (result as { error?: unknown }).error;
  if (typeof error === 'string') return error;
  if (error && typeof error === 'object' && typeof (error as { message?: unknown }).message === 'string') return (error as { message: string }).message;
  return error === undefined ? 'the plugin reported failure' : JSON.stringify(error);
}

/** Where a plugin's worker runs: its installed version, root, data dir and network grant. */
export function workerTargetOf(p: InstalledPlugin, dataDir: string): WorkerTarget {
  return { pluginId: p.id, version: p.version, root: p.root, dataDir, worker: p.manifest.worker.replace(/^(\.\/)+/, ''), network: p.manifest.sandbox?.network === true };
}

/** Another owner's worker: its own data directory (and, through the worker's owner, its own vault). */
async function ownerTarget(primary: WorkerTarget, owner: string, deps: PluginToolDeps): Promise<WorkerTarget> {
  return { ...primary, owner, dataDir: await deps.ownerDataDir(primary.pluginId, owner) };
}

export function pluginTool(plugin: InstalledPlugin, ai: AiTool, deps: PluginToolDeps, available = true): Tool {
  const method = plugin.manifest.rpc.methods[ai.method];
  const inputSchema = (method?.inputSchema ?? { type: 'object' }) as JsonSchema;
  const outputSchema = method?.outputSchema as JsonSchema | undefined;
  const declared = plugin.manifest.flowNodes?.find((n) => n.tool === ai.name);
  // a declared node carries the manifest's translations of this tool as `i18n[locale]`
  const texts = Object.entries(plugin.manifest.i18n ?? {}).flatMap(([locale, t]) => (t?.tools?.[ai.name] ? [[locale, t.tools[ai.name]] as const] : []));
  const flowNode = declared && texts.length > 0 ? { ...declared, i18n: Object.fromEntries(texts) } : declared;
  const timeoutSeconds = clampTimeout(ai.timeoutSeconds);
  const targetOf = (p: InstalledPlugin): WorkerTarget => workerTargetOf(p, deps.dataDirOf(p.id));
  // What a call needs from "the plugin as installed now", derived once per installed version: the
  // repository hands out the same object until an install, upgrade, enable, disable or uninstall.
  let derived: { from: InstalledPlugin; declared: boolean; target: WorkerTarget } | undefined;
  const derive = (p: InstalledPlugin) => {
    if (derived?.from !== p) derived = { from: p, declared: (p.manifest.aiTools ?? []).some((t) => t.name === ai.name && t.method === ai.method), target: targetOf(p) };
    return derived;
  };
  return {
    name: ai.name,
    description: ai.description,
    descriptions: Object.fromEntries(texts.flatMap(([locale, t]) => (t.description ? [[locale, t.description]] : []))),
    inputSchema,
    ...(outputSchema ? { outputSchema } : {}),
    effect: ai.effect,
    source: 'plugin',
    id: `${plugin.id}:${ai.name}`,
    schemaRevision: stableHash({ input: inputSchema, output: outputSchema ?? null }),
    idempotent: ai.idempotent === true,
    available,
    origin: plugin.id,
    ...(flowNode ? { flowNode: flowNode as unknown as Record<string, unknown> } : {}),
    ...(timeoutSeconds !== undefined ? { timeoutSeconds } : {}),
    async invoke(args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> {
      // Disabled or uninstalled since the snapshot: no new calls. Upgraded: the new version answers.
      const known = deps.currentNow?.(plugin.id);
      const now = known !== undefined ? (known ?? undefined) : deps.current ? await deps.current(plugin.id) : plugin;
      if (!now) throw new FengYuError('plugin_not_found', { pluginId: plugin.id });
      if (!now.enabled) throw new FengYuError('plugin_disabled', { pluginId: plugin.id });
      const { declared: stillDeclared, target: primary } = derive(now);
      const target = ctx.owner === DEFAULT_OWNER ? primary : await ownerTarget(primary, ctx.owner, deps);
      if (!stillDeclared) throw new FengYuError('tool_not_found', { name: ai.name });
      const params = resolveRefs(args ?? {}, ctx.grants ?? [], inputSchema);
      const result = await deps.workers.invoke({
        target,
        method: ai.method,
        params,
        toolName: ai.name,
        timeoutSeconds: timeoutSeconds ?? clampTimeout(await deps.defaultTimeoutSeconds(ctx.owner)) ?? 120,
        // a caller that tells aborts without a signal: no AbortController is made for the call
        ...(ctx.abort ? { abort: ctx.abort } : { signal: ctx.signal }),
        grants: ctx.grants ?? [],
        onProgress: ctx.progress,
      });
      const failed = failedResult(result);
      if (failed !== undefined) throw new FengYuError('tool_failed', { name: ai.name, reason: failed }, { result });
      return result;
    },
  };
}

export class PluginToolSource implements ToolSource {
  readonly kind = 'plugin' as const;

  /** The tools derived from the last plugin list (the repository returns the same array until a write). */
  private memo?: { from: InstalledPlugin[]; tools: Tool[] };

  constructor(private readonly deps: PluginToolDeps) {}

  async list(_owner: string): Promise<Tool[]> {
    return [...this.toolsOf(await this.deps.plugins())];
  }

  listNow(): readonly Tool[] | undefined {
    const plugins = this.deps.pluginsNow?.();
    return plugins ? this.toolsOf(plugins) : undefined;
  }

  private toolsOf(plugins: InstalledPlugin[]): readonly Tool[] {
    if (this.memo?.from !== plugins) this.memo = { from: plugins, tools: plugins.flatMap((p) => (p.manifest.aiTools ?? []).map((ai) => pluginTool(p, ai, this.deps, p.enabled))) };
    return this.memo.tools;
  }

  async status(): Promise<SourceStatus[]> {
    return (await this.deps.plugins()).map((p) => ({
      source: 'plugin' as const,
      name: p.id,
      state: p.enabled ? ('ok' as const) : ('disabled' as const),
      toolCount: p.manifest.aiTools?.length ?? 0,
    }));
  }
}
