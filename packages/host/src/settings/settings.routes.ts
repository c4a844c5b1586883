import type { FastifyInstance } from 'fastify';
import type { HostContext } from '../context';

/** `GET`/`PATCH /api/settings`. The core's own section (`locale`) is registered in `compose.ts`. */
export function registerSettingsRoutes(ctx: HostContext, app: FastifyInstance): void {
  app.get('/api/settings', { schema: { summary: 'The owner’s settings, secrets redacted', tags: ['settings'] } }, async (req) => ctx.settings.redacted(req.owner));

  app.patch('/api/settings', { schema: { summary: 'Apply a JSON merge patch to the settings (validated whole)', tags: ['settings'], body: { type: 'object' } } }, async (req) => {
    await ctx.settings.patch(req.owner, req.body);
    return ctx.settings.redacted(req.owner);
  });
}
