import { errorSpecOf, type Problem, registerErrors } from '@fengyu/protocol';
import { z } from 'zod';
import { processGroupsFor } from '../process/spawn';
import type { CoreServices } from '../services';
import { hostOwnerIsolation } from '../tools/builtin/builtin.source';
import { createGuard, type Guard, type PermissionsSection } from './guard';
import { type HookConfig, HooksSectionSchema } from './hook-config';
import { HookRunner } from './hooks';
import { parseRuleLines, type RuleLines } from './rules';
import { PluginHookTrustRepository } from './trust.repository';
import type { PluginHookProvider } from './types';

/**
 * The permissions domain's services: the one permission guard (rules, user hooks, trusted plugin
 * hooks), plugin-hook trust, and the `permissions` and `hooks` settings sections (rule syntax
 * checked with list and line).
 */

registerErrors({
  invalid_plugin_hooks: errorSpecOf(400),
  invalid_plugin_id: errorSpecOf(400),
  command_cwd_not_granted: errorSpecOf(403),
  command_spawn_failed: errorSpecOf(500),
});

export interface PermissionsDomain {
  guard: Guard;
  trust: PluginHookTrustRepository;
}

const RuleList = z.array(z.string().max(2000)).max(500).default([]);
export const PermissionsSectionSchema = z.object({ deny: RuleList, ask: RuleList, allow: RuleList }).strict();

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

export function createPermissionsDomain(core: Pick<CoreServices, 'db' | 'clock' | 'logger' | 'config' | 'settings' | 'onClose'>, pluginHooks?: PluginHookProvider): PermissionsDomain {
  const trust = new PluginHookTrustRepository(core.db, core.clock);
  const runner = new HookRunner({ logger: core.logger.child({ component: 'hooks' }), clock: core.clock, env: core.config.env, cwd: core.config.home, groups: processGroupsFor(core.config, (fn) => core.onClose(fn)), isolation: hostOwnerIsolation(core) });
  const guard = createGuard({ settings: core.settings, hooks: runner, trust, logger: core.logger, clock: core.clock, pluginHooks });
  core.settings.registerSection<PermissionsSection>('permissions', {
    schema: PermissionsSectionSchema as unknown as z.ZodType<PermissionsSection>,
    defaultValue: { deny: [], ask: [], allow: [] },
    validate: (value) => ruleProblems('permissions', value),
  });
  core.settings.registerSection<HookConfig[]>('hooks', {
    schema: HooksSectionSchema as unknown as z.ZodType<HookConfig[]>,
    defaultValue: [],
    validate: hookProblems,
  });
  return { guard, trust };
}
