import { FengYuError } from '@fengyu/protocol';
import type { DomainRegistrar } from '../context';
import { typedRoutes } from '../http/route-types';

/**
 * The Memory screen's API (docs/api.md): `GET /api/memory?q=&limit=&cursor=` → `{items,
 * nextCursor?}`, newest first, every whitespace-separated term of `q` in the text (any case);
 * `DELETE /api/memory/{id}` → 204. Owner-scoped: another owner's memory is a 404 like an unknown one.
 */

const listQuery = {
  type: 'object',
  properties: { q: { type: 'string', maxLength: 500 }, limit: { type: 'integer', minimum: 1, maximum: 100 }, cursor: { type: 'string', maxLength: 200 } },
  additionalProperties: false,
} as const;
const idParams = { type: 'object', properties: { id: { type: 'string', maxLength: 100 } }, required: ['id'] } as const;

export const registerMemory: DomainRegistrar = (ctx, app) => {
  const api = typedRoutes(app);
  const tags = ['memory'];
  const memory = ctx.models.memory;
  api.get('/api/memory', { schema: { summary: 'Your memories, newest first, optionally searched ({items: [{id, text, createdAt, source}], nextCursor?})', tags, querystring: listQuery } }, async (req) =>
    memory.page(req.owner, { q: req.query.q, limit: req.query.limit ?? 50, cursor: req.query.cursor }),
  );
  api.delete('/api/memory/:id', { schema: { summary: 'Delete one of your memories → 204, or 404', tags, params: idParams } }, async (req, reply) => {
    if (!(await memory.forget(req.owner, req.params.id))) throw new FengYuError('memory_not_found', { id: req.params.id });
    return reply.status(204).send();
  });
};
