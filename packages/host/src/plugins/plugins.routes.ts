import { randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import multipart from '@fastify/multipart';
import { FengYuError, manifestJsonSchema } from '@fengyu/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { DomainRegistrar } from '../context';
import { DEFAULT_OWNER } from '../http/auth';
import { typedRoutes } from '../http/route-types';
import { MAX_PACKAGE_BYTES } from './plugins.domain';
import { pluginView, pluginViewSchema } from './plugin-view';

/**
 * HTTP surface of plugins and uploads: `GET/POST /api/plugins`,
 * `POST /api/plugins/{id}/enable|disable`, `DELETE /api/plugins/{id}`, `POST /api/files`.
 * The domain's services are assembled in `plugins.domain.ts`.
 */

/** Plugins run code for every owner: only the host's default owner changes them. */
function requireAdmin(req: FastifyRequest): void {
  if (req.owner !== DEFAULT_OWNER) throw new FengYuError('forbidden', { reason: 'only the default owner installs, enables, disables or removes plugins' });
}
const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', maxLength: 200 } } } as const;

/** The single file part of a multipart request (its stream is capped at `maxBytes`). */
async function receiveUpload(req: FastifyRequest, maxBytes: number) {
  const part = await req.file({ limits: { fileSize: maxBytes, files: 1 } }).catch((e: unknown) => {
    throw new FengYuError('invalid_request', { reason: `expected a multipart/form-data upload: ${(e as Error).message}` });
  });
  if (!part) throw new FengYuError('invalid_request', { reason: 'the multipart body holds no file' });
  return part;
}

export const registerPlugins: DomainRegistrar = async (ctx, app) => {
  const { service, files } = ctx.plugins;
  const trust = ctx.permissions.trust;
  const view = async (id: string, owner: string) => {
    const p = await service.get(id);
    return pluginView(p, ctx.posture(), { present: service.hasHooks(p), trusted: (await trust.trustedIds(owner)).has(p.id) });
  };

  app.get('/api/plugins/manifest-schema', { schema: { summary: 'JSON Schema of a plugin manifest.json', tags: ['plugins'] } }, async () => manifestJsonSchema());
  app.get('/api/plugins', { schema: { summary: 'Installed plugins', tags: ['plugins'], response: { 200: { type: 'array', items: pluginViewSchema } } } }, async (req) => {
    const trusted = await trust.trustedIds(req.owner);
    return (await service.list()).map((p) => pluginView(p, ctx.posture(), { present: service.hasHooks(p), trusted: trusted.has(p.id) }));
  });
  const api = typedRoutes(app);
  for (const action of ['enable', 'disable'] as const) {
    api.post(`/api/plugins/:id/${action}`, { schema: { summary: `${action === 'enable' ? 'Enable' : 'Disable'} a plugin`, tags: ['plugins'], params: idParams } }, async (req) => {
      requireAdmin(req);
      const { id } = req.params;
      await service.setEnabled(id, action === 'enable');
      return view(id, req.owner);
    });
  }
  api.delete('/api/plugins/:id', {
    schema: { summary: 'Uninstall a plugin (its data dir is kept unless purgeData=true)', tags: ['plugins'], params: idParams, querystring: { type: 'object', properties: { purgeData: { type: 'boolean' } } } as const },
  }, async (req) => {
    requireAdmin(req);
    const { id } = req.params;
    await service.uninstall(id, req.query.purgeData === true);
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
        return view(installed.id, req.owner);
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
