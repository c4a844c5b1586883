import { FengYuError, type PermissionMode, type Problem, registerErrors, errorSpecOf } from '@fengyu/protocol';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { DomainRegistrar, HostContext } from '../context';
import { createGuard, type PermissionsSection } from './guard';
import { type HookConfig, HooksSectionSchema } from './hook-config';
import { processGroupsFor } from '../process/spawn';
import { hostOwnerIsolation } from '../tools/builtin/builtin.source';
import { HookRunner } from './hooks';
import { type CallFacts, COMMAND_TOOL, parseRuleLines, type RuleLines } from './rules';
import { PluginHookTrustRepository } from './trust.repository';

/**
 * The permissions domain: replaces `ctx.guard`, registers the `permissions` and `hooks`
 * settings sections (rule syntax checked with list and line), the dry run
 * `POST /api/permissions/check` (SPEC §7) and plugin-hook trust routes.
 */

registerErrors({
  invalid_plugin_hooks: errorSpecOf(400),
  invalid_plugin_id: errorSpecOf(400),
  command_cwd_not_granted: errorSpecOf(403),
  command_spawn_failed: errorSpecOf(500),
});

const RuleList = z.array(z.string().max(2000)).max(500).default([]);
export const PermissionsSectionSchema = z.object({ deny: RuleList, ask: RuleList, allow: RuleList }).strict();

const PLUGIN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;
const MODES = ['ask', 'approve-for-me', 'full-access'];

/** Rule problems as settings details: `{field: "permissions.allow[2]", line: 3, message}`. */
export function ruleProblems(section: 'permissions' | 'rules', lines: RuleLines): Array<Problem & { line: number }> {
  return parseRuleLines(lines).problems.map((p) => ({
    code: 'invalid_rule',
    field: `${section}.${p.list}[${p.line - 1}]`,
    line: p.line,
    message: `line ${p.line}: "${p.text}": ${p.reason}`,
    params: { text: p.text, line: p.line, reason: p.reason, list: p.list },
  }));
}

function hookProblems(hooks: HookConfig[]): Problem[] {
  const seen = new Set<string>();
  const problems: Problem[] = [];
  hooks.forEach((h, i) => {
    if (seen.has(h.name)) problems.push({ code: 'invalid_hook', field: `hooks[${i}].name`, message: `hook name "${h.name}" is used twice`, params: { name: h.name, reason: 'duplicate name' } });
    seen.add(h.name);
  });
  return problems;
}

export const registerPermissions: DomainRegistrar = (ctx: HostContext, app: FastifyInstance) => {
  const trust = new PluginHookTrustRepository(ctx.db, ctx.clock);
  const runner = new HookRunner({ logger: ctx.logger.child({ component: 'hooks' }), clock: ctx.clock, env: ctx.config.env, cwd: ctx.config.home, groups: processGroupsFor(ctx.config, (fn) => ctx.onClose(fn)), isolation: hostOwnerIsolation(ctx) });
  const guard = createGuard({ settings: ctx.settings, hooks: runner, trust, logger: ctx.logger, clock: ctx.clock });
  ctx.guard = guard;

  ctx.settings.registerSection<PermissionsSection>('permissions', {
    schema: PermissionsSectionSchema as unknown as z.ZodType<PermissionsSection>,
    defaultValue: { deny: [], ask: [], allow: [] },
    validate: (value) => ruleProblems('permissions', value),
  });
  ctx.settings.registerSection<HookConfig[]>('hooks', {
    schema: HooksSectionSchema as unknown as z.ZodType<HookConfig[]>,
    defaultValue: [],
    validate: hookProblems,
  });

  app.post(
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
        },
      },
    },
    async (req) => {
      const body = req.body as { tool: string; arguments?: Record<string, unknown>; permissionMode?: PermissionMode; rules?: RuleLines };
      if (body.rules) {
        const problems = ruleProblems('rules', body.rules);
        if (problems.length) throw new FengYuError('invalid_settings', { count: problems.length }, problems);
      }
      const call = await callFacts(ctx, req.owner, body.tool, body.arguments ?? {});
      const d = await guard.dryRun({ owner: req.owner, call, permissionMode: body.permissionMode ?? 'ask', ...(body.rules ? { rules: body.rules } : {}) });
      return { decision: d.decision, source: d.source, ...(d.rule ? { rule: d.rule } : {}), reason: d.reason };
    },
  );

  const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 128 } } };
  app.post('/api/plugin-hooks/:id/trust', { schema: { summary: "Trust a plugin's hooks (they run from the next call on)", tags: ['permissions'], params: idParams } }, async (req) => {
    const { id } = req.params as { id: string };
    if (!PLUGIN_ID.test(id)) throw new FengYuError('invalid_plugin_id', { pluginId: id });
    const rec = await trust.trust(id, req.owner);
    return { pluginId: id, trusted: true, trustedAt: rec.trustedAt };
  });
  app.post('/api/plugin-hooks/:id/untrust', { schema: { summary: "Stop running a plugin's hooks (from the next call on)", tags: ['permissions'], params: idParams } }, async (req) => {
    const { id } = req.params as { id: string };
    if (!PLUGIN_ID.test(id)) throw new FengYuError('invalid_plugin_id', { pluginId: id });
    const removed = await trust.untrust(id);
    return { pluginId: id, trusted: false, changed: removed };
  });
  app.get('/api/plugin-hooks', { schema: { summary: 'Plugins whose hooks are trusted', tags: ['permissions'] } }, async () => ({ trusted: await trust.list() }));
};

/** The facts a rule sees, from the owner's catalog (execute_command is known even when absent). */
async function callFacts(ctx: HostContext, owner: string, name: string, args: Record<string, unknown>): Promise<CallFacts> {
  const tool = (await ctx.catalog.snapshot(owner)).get(name);
  if (tool) return { name: tool.name, effect: tool.effect, source: tool.source, ...(tool.origin ? { origin: tool.origin } : {}), arguments: args };
  if (name === COMMAND_TOOL) return { name, effect: 'command', source: 'builtin', arguments: args };
  throw new FengYuError('tool_not_found', { name });
}
