import { FengYuError } from '@fengyu/protocol';
import type { DomainRegistrar } from '../context';
import { typedRoutes } from '../http/route-types';

/**
 * `PUT /api/secrets/{name} {value}` → 204, `GET /api/secrets` → `{items}` (never a value),
 * `DELETE /api/secrets/{name}` → 204 or 404 (docs/secrets.md). Owner-scoped: another owner's secret
 * does not exist for the caller. Names and values are checked by the vault, so a bad one is the
 * same localized error whatever the path.
 */

const nameParams = { type: 'object', properties: { name: { type: 'string', maxLength: 200 } }, required: ['name'] } as const;

export const registerSecrets: DomainRegistrar = (ctx, app) => {
  const api = typedRoutes(app);
  const tags = ['secrets'];
  api.get('/api/secrets', { schema: { summary: 'Your secrets by name ({items: [{name, createdAt, updatedAt}]}); never a value', tags } }, async (req) => ({ items: await ctx.vault.list(req.owner) }));

  api.put('/api/secrets/:name', { schema: { summary: 'Create or replace a secret ({value}: 1..65536 characters) → 204', tags, params: nameParams } }, async (req, reply) => {
    const body: unknown = req.body;
    const only = body && typeof body === 'object' && !Array.isArray(body) && Object.keys(body).every((k) => k === 'value');
    if (!only) throw new FengYuError('secret_value_invalid', { name: req.params.name, reason: 'the body must be a JSON object {"value": "…"} and nothing else' });
    await ctx.vault.put(req.owner, req.params.name, (body as { value?: unknown }).value);
    return reply.status(204).send();
  });

  api.delete('/api/secrets/:name', { schema: { summary: 'Delete a secret → 204, or 404', tags, params: nameParams } }, async (req, reply) => {
    if (!(await ctx.vault.remove(req.owner, req.params.name))) throw new FengYuError('secret_not_found', { name: req.params.name });
    return reply.status(204).send();
  });
};
