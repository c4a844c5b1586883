import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import multipart from '@fastify/multipart';
import { FengYuError, manifestJsonSchema } from '@fengyu/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { DomainRegistrar, HostContext } from '../context';
import { FileService } from '../files/file.service';
import { DEFAULT_OWNER } from '../http/auth';
import { type RunFileEntry, resolveRunFiles } from '../files/run-files';
import { parsePluginHooks } from '../permissions/hook-config';
import { PluginHookTrustRepository } from '../permissions/trust.repository';
import { installBundledPlugins } from './bundled-plugins';
import { PluginRepository } from './plugin.repository';
import { PluginService } from './plugin.service';
import { PluginToolSource } from './plugin-tool-source';
import { pluginView, pluginViewSchema } from './plugin-view';
import { processGroupsFor } from '../process/spawn';
import { sandboxFor } from './sandbox';
import { WorkerManager } from './worker-manager';

/**
 * HTTP surface of plugins and uploads (SPEC §7): `GET/POST /api/plugins`,
 * `POST /api/plugins/{id}/enable|disable`, `DELETE /api/plugins/{id}`, `POST /api/files`.
 * Also assembles the domain: sandbox posture, worker manager, the plugin tool source, the
 * plugin-hook provider for the guard, and the bundled plugins.
 */

export interface PluginsDomain {
  service: PluginService;
  workers: WorkerManager;
  files: FileService;
}

/** Where other domains find the plugins domain (`ctx.plugins`, set by `registerPlugins`). */
export type WithPlugins = HostContext & { plugins?: PluginsDomain };

const MAX_PACKAGE_BYTES = 256 * 1024 * 1024;

/** Plugins run code for every owner: only the host's default owner changes them. */
function requireAdmin(req: FastifyRequest): void {
  if (req.owner !== DEFAULT_OWNER) throw new FengYuError('forbidden', { reason: 'only the default owner installs, enables, disables or removes plugins' });
}
const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 200 } } } as const;

/** Names taken by non-plugin tools; bounded in time (a slow MCP server must not block installs). */
async function otherToolNames(ctx: HostContext): Promise<string[]> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), 5000);
  });
  const snapshot = await Promise.race([ctx.catalog.snapshot('default'), timeout]).finally(() => clearTimeout(timer));
  return (snapshot?.tools ?? []).filter((t) => t.source !== 'plugin').map((t) => t.name);
}

export function createPluginsDomain(ctx: HostContext): PluginsDomain {
  const backend = sandboxFor(ctx.config);
  ctx.posture = () => backend.posture;
  const logger = ctx.logger.child({ component: 'plugins' });
  const workers = new WorkerManager({ backend, logger, env: ctx.config.env, groups: processGroupsFor(ctx.config, (fn) => ctx.onClose(fn)) });
  ctx.onClose(() => workers.close());
  const repo = new PluginRepository(ctx.db);
  const service = new PluginService({
    repo,
    workers,
    home: ctx.config.home,
    clock: ctx.clock,
    logger,
    maxArchiveBytes: MAX_PACKAGE_BYTES,
    validateHooks: (id, doc) => void parsePluginHooks(id, doc),
    otherToolNames: () => otherToolNames(ctx),
  });
  ctx.catalog.register(
    new PluginToolSource({ plugins: () => repo.list(), current: (id) => repo.get(id), workers, dataDirOf: (id) => service.dataDirOf(id), defaultTimeoutSeconds: () => ctx.config.callTimeoutSeconds }),
  );
  ctx.guard.usePluginHooks?.({
    trustedHooks: async () => {
      const out = [];
      for (const s of await service.listHookSources()) {
        try {
          out.push({ pluginId: s.pluginId, root: s.root, dataDir: s.dataDir, hooks: parsePluginHooks(s.pluginId, s.hooksJson) });
        } catch (err) {
          logger.warn({ plugin: s.pluginId, err }, 'plugin hooks invalid; skipped');
        }
      }
      return out;
    },
  });
  return { service, workers, files: new FileService(ctx.db, ctx.config.home, ctx.clock) };
}

/** The single file part of a multipart request (its stream is capped at `maxBytes`). */
async function receiveUpload(req: FastifyRequest, maxBytes: number) {
  const part = await req.file({ limits: { fileSize: maxBytes, files: 1 } }).catch((e: unknown) => {
    throw new FengYuError('invalid_request', { reason: `expected a multipart/form-data upload: ${(e as Error).message}` });
  });
  if (!part) throw new FengYuError('invalid_request', { reason: 'the multipart body holds no file' });
  return part;
}

export const registerPlugins: DomainRegistrar = async (ctx, app) => {
  const domain = createPluginsDomain(ctx);
  (ctx as WithPlugins).plugins = domain;
  const { service, files } = domain;
  const trust = new PluginHookTrustRepository(ctx.db, ctx.clock);
  const view = async (id: string) => {
    const p = await service.get(id);
    return pluginView(p, ctx.posture(), { present: service.hasHooks(p), trusted: (await trust.trustedIds()).has(p.id) });
  };

  ctx.agent.setFilesResolver(async (owner, runId, entries) => {
    const grants = await resolveRunFiles(ctx, owner, runId, entries as RunFileEntry[]);
    return { grants, names: [...new Set(grants.map((g) => g.name))] };
  });
  // Leftovers of an install or upload interrupted by a crash.
  for (const dir of ['.staging', '.uploads']) await rm(join(ctx.config.home, 'plugins', dir), { recursive: true, force: true });
  await installBundledPlugins(service, ctx.config.bundledPluginDirs, ctx.config.home, ctx.logger);

  app.get('/api/plugins/manifest-schema', { schema: { summary: 'JSON Schema of a plugin manifest.json', tags: ['plugins'] } }, async () => manifestJsonSchema());
  app.get('/api/plugins', { schema: { summary: 'Installed plugins', tags: ['plugins'], response: { 200: { type: 'array', items: pluginViewSchema } } } }, async () => {
    const trusted = await trust.trustedIds();
    return (await service.list()).map((p) => pluginView(p, ctx.posture(), { present: service.hasHooks(p), trusted: trusted.has(p.id) }));
  });
  for (const action of ['enable', 'disable'] as const) {
    app.post(`/api/plugins/:id/${action}`, { schema: { summary: `${action === 'enable' ? 'Enable' : 'Disable'} a plugin`, tags: ['plugins'], params: idParams } }, async (req) => {
      requireAdmin(req);
      const { id } = req.params as { id: string };
      await service.setEnabled(id, action === 'enable');
      return view(id);
    });
  }
  app.delete('/api/plugins/:id', {
    schema: { summary: 'Uninstall a plugin (its data dir is kept unless purgeData=true)', tags: ['plugins'], params: idParams, querystring: { type: 'object', properties: { purgeData: { type: 'boolean' } } } },
  }, async (req) => {
    requireAdmin(req);
    const { id } = req.params as { id: string };
    await service.uninstall(id, (req.query as { purgeData?: boolean }).purgeData === true);
    return { id, uninstalled: true };
  });

  await app.register(async (scoped: FastifyInstance) => {
    await scoped.register(multipart, { limits: { files: 1, fields: 10, parts: 20 } });
    scoped.post('/api/plugins', { schema: { summary: 'Install or upgrade a plugin (.fyp as multipart field "file")', tags: ['plugins'], consumes: ['multipart/form-data'] } }, async (req, reply) => {
      requireAdmin(req);
      const part = await receiveUpload(req, MAX_PACKAGE_BYTES);
      const dir = join(ctx.config.home, 'plugins', '.uploads');
      await mkdir(dir, { recursive: true });
      const tmp = join(dir, `${randomUUID()}.fyp`);
      try {
        await pipeline(part.file, createWriteStream(tmp, { mode: 0o600 })).catch((e: { code?: string }) => {
          throw e.code === 'FST_REQ_FILE_TOO_LARGE' ? new FengYuError('package_too_large', { reason: `more than ${MAX_PACKAGE_BYTES} bytes` }) : e;
        });
        if (part.file.truncated) throw new FengYuError('package_too_large', { reason: `more than ${MAX_PACKAGE_BYTES} bytes` });
        const before = await service.list();
        const installed = await service.installPackage(tmp);
        reply.code(before.some((p) => p.id === installed.id) ? 200 : 201);
        return view(installed.id);
      } finally {
        await rm(tmp, { force: true });
      }
    });
    scoped.post('/api/files', { schema: { summary: 'Upload a file (multipart field "file") → FileRef', tags: ['files'], consumes: ['multipart/form-data'] } }, async (req, reply) => {
      const part = await receiveUpload(req, files.maxBytes);
      const ref = await files.store(req.owner, part.filename, part.file).catch((e: { code?: string }) => {
        throw e.code === 'FST_REQ_FILE_TOO_LARGE' ? new FengYuError('file_too_large', { limit: files.maxBytes }) : e;
      });
      reply.code(201);
      return ref;
    });
  });
};
