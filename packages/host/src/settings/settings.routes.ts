import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { HostContext } from '../context';

/** `GET`/`PATCH /api/settings` (SPEC §7) and the sections the core owns. */
export function registerSettingsRoutes(ctx: HostContext, app: FastifyInstance): void {
  ctx.settings.registerSection('locale', { schema: z.enum(['en', 'zh-CN']), defaultValue: 'en' });

  app.get('/api/settings', { schema: { summary: 'The owner’s settings, secrets redacted', tags: ['settings'] } }, async (req) => ctx.settings.redacted(req.owner));

  app.patch('/api/settings', { schema: { summary: 'Apply a JSON merge patch to the settings (validated whole)', tags: ['settings'], body: { type: 'object' } } }, async (req) => {
    await ctx.settings.patch(req.owner, req.body);
    return ctx.settings.redacted(req.owner);
  });
}
