import { exportFileName } from '@fengyu/protocol';
import type { DomainRegistrar } from '../context';
import { typedRoutes } from '../http/route-types';
import { parseDiffSide, PortabilityService } from './portability.service';
import { registerPortabilityErrors } from './portability.errors';

/**
 * Workflows in and out: `GET /api/workflows/{id}/export`, `POST /api/workflows/import` and
 * `GET /api/workflows/{id}/diff`. Bodies are bounded by the host's body limit (413 beyond).
 */

const id = { type: 'string', minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$' } as const;
const idParams = { type: 'object', required: ['id'], properties: { id } } as const;
const diffQuery = {
  type: 'object',
  properties: {
    from: { type: 'string', maxLength: 40, description: 'A published version number, or "draft"; default the active version.' },
    to: { type: 'string', maxLength: 40, description: 'A published version number, or "draft" (the default).' },
  },
} as const;

export const registerPortability: DomainRegistrar = (ctx, app) => {
  registerPortabilityErrors();
  const service = new PortabilityService({
    workflows: ctx.workflows.service,
    clock: ctx.clock,
    baseCatalog: (owner) => ctx.workflows.base.snapshot(owner),
    pluginVersion: async (pluginId) => (await ctx.plugins.service.get(pluginId))?.version,
    secretNames: async (owner) => new Set((await ctx.vault.list(owner)).map((x) => x.name)),
  });
  const api = typedRoutes(app);
  const tags = ['workflows'];

  api.get('/api/workflows/:id/export', { schema: { summary: 'Export a workflow as a self-contained document (no owner, revision, secret value or file)', tags, params: idParams } }, async (req, reply) => {
    const doc = await service.export(req.owner, req.params.id);
    reply.header('content-disposition', `attachment; filename="${exportFileName(doc.name, req.params.id)}"`);
    return doc;
  });

  api.post('/api/workflows/import', { schema: { summary: 'Import an exported document (the JSON object GET …/export answers) as a new draft; warnings list missing tools and secrets', tags } }, async (req, reply) => {
    const result = await service.import(req.owner, req.body);
    reply.code(201);
    return result;
  });

  api.get('/api/workflows/:id/diff', { schema: { summary: 'What changed between two versions, or a version and the draft', tags, params: idParams, querystring: diffQuery } }, async (req) => {
    const row = await ctx.workflows.service.row(req.owner, req.params.id);
    const from = parseDiffSide('from', req.query.from, row.published_version ?? undefined);
    const to = parseDiffSide('to', req.query.to, 'draft');
    return service.diff(req.owner, req.params.id, from, to);
  });
};
