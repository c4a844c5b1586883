import { type AgentPlan, FengYuError, localize } from '@fengyu/protocol';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { createGuard, type PermissionsSection } from '../permissions/guard';
import { assertUnattendedRunnable, gatedSteps, type ToolFacts } from './unattended-check';

/** The check against the real guard (rule parser, matcher, shell analysis, mode default). */

function guardWith(rules: Partial<PermissionsSection>) {
  const section = { deny: [], ask: [], allow: [], ...rules };
  return createGuard({
    settings: { section: async <T>(_owner: string, name: string) => (name === 'permissions' ? section : []) as T },
    // hooks and plugin trust are never consulted by a dry run
    hooks: {} as never,
    trust: {} as never,
    logger: pino({ level: 'silent' }),
    clock: { now: () => 0 },
  });
}

const tools: ToolFacts[] = [
  { name: 'read_sheet', effect: 'read', source: 'plugin', origin: 'excel' },
  { name: 'send_email', effect: 'external', source: 'plugin', origin: 'email' },
  { name: 'write_sheet', effect: 'write', source: 'plugin', origin: 'excel' },
  { name: 'execute_command', effect: 'command', source: 'builtin' },
  { name: 'web_fetch', effect: 'read', source: 'builtin' },
];

const plan = (...steps: AgentPlan['steps']): AgentPlan => ({ steps });

describe('unattended check', () => {
  it('passes a read-only workflow under ask', async () => {
    const gated = await gatedSteps({ owner: 'o', plan: plan({ id: 'a', tool: 'read_sheet' }), permissionMode: 'ask', tools, guard: guardWith({}) });
    expect(gated).toEqual([]);
  });

  it('refuses an uncovered write or external step under ask, naming the steps', async () => {
    const input = { owner: 'o', plan: plan({ id: 'a', tool: 'read_sheet' }, { id: 'b', tool: 'write_sheet' }, { id: 'c', tool: 'send_email' }), permissionMode: 'ask' as const, tools, guard: guardWith({}) };
    const gated = await gatedSteps(input);
    expect(gated.map((g) => g.stepId)).toEqual(['b', 'c']);
    const err = await assertUnattendedRunnable(input, 'schedule_needs_unattended_mode').catch((e) => e);
    expect(err).toBeInstanceOf(FengYuError);
    expect(err.code).toBe('schedule_needs_unattended_mode');
    expect(err.status).toBe(400);
    expect(localize(err.code, err.params, 'en')).toContain('"b", "c"');
    expect(localize(err.code, err.params, 'zh-CN')).toContain('"b", "c"');
    const webhook = await assertUnattendedRunnable(input, 'trigger_needs_unattended_mode').catch((e) => e);
    expect(webhook.code).toBe('trigger_needs_unattended_mode');
  });

  it('accepts the steps once allow rules cover them (Tool, Effect, Mcp-style globs)', async () => {
    const p = plan({ id: 'b', tool: 'write_sheet' }, { id: 'c', tool: 'send_email' });
    expect(await gatedSteps({ owner: 'o', plan: p, permissionMode: 'ask', tools, guard: guardWith({ allow: ['Tool(write_*)', 'Effect(external)'] }) })).toEqual([]);
    const partly = await gatedSteps({ owner: 'o', plan: p, permissionMode: 'ask', tools, guard: guardWith({ allow: ['Tool(write_*)'] }) });
    expect(partly.map((g) => g.stepId)).toEqual(['c']);
  });

  it('an ask rule gates even a read step; a deny rule is a failure, not a gate', async () => {
    const p = plan({ id: 'a', tool: 'read_sheet' }, { id: 'b', tool: 'write_sheet' });
    const gated = await gatedSteps({ owner: 'o', plan: p, permissionMode: 'ask', tools, guard: guardWith({ ask: ['Tool(read_*)'], deny: ['Tool(write_*)'] }) });
    expect(gated.map((g) => g.stepId)).toEqual(['a']);
  });

  it('approve-for-me and full-access are never refused', async () => {
    const p = plan({ id: 'b', tool: 'write_sheet', requiresApproval: true }, { id: 'm', instruction: 'do things' });
    for (const permissionMode of ['approve-for-me', 'full-access'] as const) {
      expect(await gatedSteps({ owner: 'o', plan: p, permissionMode, tools, guard: guardWith({}) })).toEqual([]);
    }
  });

  it('judges a command step by its literal command; a command filled at run time is unknown', async () => {
    const guard = guardWith({ allow: ['Command(git status)'] });
    const literal = plan({ id: 'a', tool: 'execute_command', arguments: { command: 'git status' } });
    expect(await gatedSteps({ owner: 'o', plan: literal, permissionMode: 'ask', tools, guard })).toEqual([]);
    const templated = plan({ id: 'a', tool: 'execute_command', arguments: { command: 'git status {{inputs.extra}}' } });
    expect((await gatedSteps({ owner: 'o', plan: templated, permissionMode: 'ask', tools, guard })).map((g) => g.stepId)).toEqual(['a']);
    const floor = plan({ id: 'a', tool: 'execute_command', arguments: { command: 'rm -rf /tmp/x' } });
    expect((await gatedSteps({ owner: 'o', plan: floor, permissionMode: 'ask', tools, guard: guardWith({ allow: ['Command'] }) })).map((g) => g.stepId)).toEqual(['a']);
  });

  it('a URL rule covers a literal URL only', async () => {
    const guard = guardWith({ ask: ['WebFetch(domain:intranet.example)'] });
    const known = plan({ id: 'f', tool: 'web_fetch', arguments: { url: 'https://intranet.example/x' } });
    expect((await gatedSteps({ owner: 'o', plan: known, permissionMode: 'ask', tools, guard })).map((g) => g.stepId)).toEqual(['f']);
    const other = plan({ id: 'f', tool: 'web_fetch', arguments: { url: 'https://example.org/x' } });
    expect(await gatedSteps({ owner: 'o', plan: other, permissionMode: 'ask', tools, guard })).toEqual([]);
  });

  it('a model step is gated when the model could call an uncovered non-read tool', async () => {
    const p = plan({ id: 'm', instruction: 'summarize' });
    const readOnly = tools.filter((t) => t.effect === 'read');
    expect(await gatedSteps({ owner: 'o', plan: p, permissionMode: 'ask', tools: readOnly, guard: guardWith({}) })).toEqual([]);
    const gated = await gatedSteps({ owner: 'o', plan: p, permissionMode: 'ask', tools, guard: guardWith({}) });
    expect(gated).toMatchObject([{ stepId: 'm', code: 'unattended_model_step_gated', params: { tool: 'send_email' } }]);
    const unavailable = tools.map((t) => (t.effect === 'read' ? t : { ...t, available: false }));
    expect(await gatedSteps({ owner: 'o', plan: p, permissionMode: 'ask', tools: unavailable, guard: guardWith({}) })).toEqual([]);
  });

  it('a requiresApproval step and pinned steps', async () => {
    const gated = await gatedSteps({
      owner: 'o',
      plan: plan({ id: 'r', tool: 'read_sheet', requiresApproval: true }, { id: 'p', tool: 'write_sheet', pinned: { result: 1 } }),
      permissionMode: 'ask',
      tools,
      guard: guardWith({}),
    });
    expect(gated.map((g) => [g.stepId, g.code])).toEqual([['r', 'unattended_step_requires_approval']]);
  });
});
