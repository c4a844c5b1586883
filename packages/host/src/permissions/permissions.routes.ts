import { FengYuError } from '@fengyu/protocol';
import type { FastifyInstance } from 'fastify';
import type { DomainRegistrar, HostContext } from '../context';
import { typedRoutes } from '../http/route-types';
import { ruleProblems } from './permissions.domain';
import { type CallFacts, COMMAND_TOOL } from './rules';

/**
 * HTTP surface of the permissions domain (its services are in `permissions.domain.ts`): the dry run
 * `POST /api/permissions/check` and plugin-hook trust routes.
 */

const PLUGIN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const MODES = ['ask', 'approve-for-me', 'full-access'] as const;

export const registerPermissions: DomainRegistrar = (ctx: HostContext, app: FastifyInstance) => {
  const { guard, trust } = ctx.permissions;
  const api = typedRoutes(app);

  api.post(
    '/api/permissions/check',
    {
      schema: {
        summary: 'Dry run: what the guard would decide for a tool call (hooks are not run)',
        tags: ['permissions'],
        body: {
          type: 'object',
          required: ['tool'],
          additionalProperties: false,
          properties: {
            tool: { type: 'string', minLength: 1, maxLength: 200 },
            arguments: { type: 'object' },
            permissionMode: { type: 'string', enum: MODES },
            rules: {
              type: 'object',
              additionalProperties: false,
              properties: {
                deny: { type: 'array', items: { type: 'string' }, maxItems: 500 },
                ask: { type: 'array', items: { type: 'string' }, maxItems: 500 },
                allow: { type: 'array', items: { type: 'string' }, maxItems: 500 },
              },
            },
          },
        } as const,
      },
    },
    async (req) => {
      const body = req.body;
      if (body.rules) {
        const problems = ruleProblems('rules', body.rules);
        if (problems.length) throw new FengYuError('invalid_settings', { count: problems.length }, problems);
      }
      const call = await callFacts(ctx, req.owner, body.tool, body.arguments ?? {});
      const d = await guard.dryRun({ owner: req.owner, call, permissionMode: body.permissionMode ?? 'ask', ...(body.rules ? { rules: body.rules } : {}) });
      return { decision: d.decision, source: d.source, ...(d.rule ? { rule: d.rule } : {}), reason: d.reason };
    },
  );

  const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 128 } } } as const;
  api.post('/api/plugin-hooks/:id/trust', { schema: { summary: "Trust a plugin's hooks (they run from the next call on)", tags: ['permissions'], params: idParams } }, async (req) => {
    const { id } = req.params;
    if (!PLUGIN_ID.test(id)) throw new FengYuError('invalid_plugin_id', { pluginId: id });
    const rec = await trust.trust(id, req.owner);
    return { pluginId: id, trusted: true, trustedAt: rec.trustedAt };
  });
  api.post('/api/plugin-hooks/:id/untrust', { schema: { summary: "Stop running a plugin's hooks (from the next call on)", tags: ['permissions'], params: idParams } }, async (req) => {
    const { id } = req.params;
    if (!PLUGIN_ID.test(id)) throw new FengYuError('invalid_plugin_id', { pluginId: id });
    const removed = await trust.untrust(id, req.owner);
    return { pluginId: id, trusted: false, changed: removed };
  });
  api.get('/api/plugin-hooks', { schema: { summary: 'Plugins whose hooks are trusted', tags: ['permissions'] } }, async (req) => ({ trusted: await trust.list(req.owner) }));
};

/** The facts a rule sees, from the owner's catalog (execute_command is known even when absent). */
async function callFacts(ctx: HostContext, owner: string, name: string, args: Record<string, unknown>): Promise<CallFacts> {
  const tool = (await ctx.catalog.snapshot(owner)).get(name);
  if (tool) return { name: tool.name, effect: tool.effect, source: tool.source, ...(tool.origin ? { origin: tool.origin } : {}), arguments: args };
  if (name === COMMAND_TOOL) return { name, effect: 'command', source: 'builtin', arguments: args };
  throw new FengYuError('tool_not_found', { name });
}
