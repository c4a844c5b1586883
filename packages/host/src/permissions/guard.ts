import { localize } from '@fengyu/protocol';
import type { Logger } from 'pino';
import type { Clock } from '../clock';
import { signalOf } from '../tools/call-scope';
import type { HookVerdict } from './decide';
import { evaluateCall } from './evaluate';
import { type HookConfig, type HookEvent, hookMatches } from './hook-config';
import type { HookOutcome, HookRunner, HookTarget } from './hooks';
import { type CallFacts, COMMAND_TOOL, parseRuleLines, type RuleLines, type RuleSet } from './rules';
import { type BashParser, loadBashParser } from './shell-parser';
import type { PluginHookTrustRepository } from './trust.repository';
import type { DryRunInput, GuardDecision, PermissionGuard, PluginHookProvider, RunEnd, ToolCall, ToolOutcome } from './types';

/**
 * The permission guard (the one implementation of `PermissionGuard`): the owner's saved rules
 * and hooks (settings sections `permissions` and `hooks`), trusted plugin hooks, and the pure
 * decision in `decide.ts`. Hook runs come back as `audits`; the caller appends them to the run.
 */

export interface PermissionsSection {
  deny: string[];
  ask: string[];
  allow: string[];
}

export interface GuardDeps {
  settings: {
    section<T>(owner: string, name: string): Promise<T>;
    /** The section `section` would answer, when that needs no lookup; else undefined. */
    sectionNow?<T>(owner: string, name: string): T | undefined;
  };
  hooks: HookRunner;
  trust: PluginHookTrustRepository;
  logger: Logger;
  clock: Clock;
  parser?: () => Promise<BashParser>;
  /** Trusted plugin hooks (the plugins domain provides them). */
  pluginHooks?: PluginHookProvider;
}

export interface Guard extends PermissionGuard {
  /** What `check` would decide, without running hooks (a dry run). */
  dryRun(input: DryRunInput): Promise<GuardDecision>;
}

/** Stands in for the parser where no command line is analysed; analysing with it makes a command opaque. */
const NOT_A_COMMAND: BashParser = {
  parse() {
    throw new Error('not a command call');
  },
};

export function createGuard(deps: GuardDeps): Guard {
  let provider: PluginHookProvider | undefined = deps.pluginHooks;
  const parser = deps.parser ?? loadBashParser;
  // The grammar once loaded: a later command call parses without waiting for it again.
  let loadedParser: BashParser | undefined;
  // Only a command call has a command line to parse: other calls never load the grammar.
  const parserFor = (tool: string): BashParser | Promise<BashParser> => {
    if (tool !== COMMAND_TOOL) return NOT_A_COMMAND;
    return (
      loadedParser ??
      parser().then((p) => {
        loadedParser = p;
        return p;
      })
    );
  };
  // The settings store hands out the same section object until it changes: parse it once.
  const parsed = new WeakMap<object, RuleSet>();

  function rulesFrom(lines: PermissionsSection | undefined): RuleSet {
    const section = lines ?? { deny: [], ask: [], allow: [] };
    const hit = parsed.get(section);
    if (hit) return hit;
    const rules = parseRuleLines(section).rules;
    parsed.set(section, rules);
    return rules;
  }

  async function rulesOf(owner: string, candidate?: RuleLines): Promise<RuleSet> {
    if (candidate) return parseRuleLines(candidate).rules;
    return rulesFrom(await deps.settings.section<PermissionsSection>(owner, 'permissions'));
  }

  /**
   * True when it is known without a lookup that no hook is selected for this event and tool: the
   * owner's hooks section is at hand and selects none, and the plugins' hook sets are at hand and
   * empty (with a plugin hook set, its trust is looked up, so the answer is "not known").
   */
  function noHooksNow(owner: string, event: HookEvent, toolName?: string): boolean {
    if (!deps.settings.sectionNow) return false;
    const own = deps.settings.sectionNow<HookConfig[]>(owner, 'hooks');
    if (own === undefined || own.some((h) => selects(h, event, toolName))) return false;
    if (!provider) return true;
    return provider.trustedHooksNow?.()?.length === 0;
  }

  /** `check` without a hook and with every input at hand: no promise turn (the common call). */
  function checkNow(call: ToolCall): GuardDecision | undefined {
    if (!noHooksNow(call.owner, 'pre_tool_use', call.tool.name)) return undefined;
    const lines = deps.settings.sectionNow?.<PermissionsSection>(call.owner, 'permissions');
    const p = call.tool.name === COMMAND_TOOL ? loadedParser : NOT_A_COMMAND;
    if (lines === undefined || !p) return undefined;
    const { shell: _shell, ...rest } = evaluateCall(p, { call: facts(call), mode: call.permissionMode, rules: rulesFrom(lines) });
    return rest;
  }

  /** User hooks of the owner, then trusted plugin hooks, for one event and tool. */
  async function targets(owner: string, event: HookEvent, toolName?: string): Promise<HookTarget[]> {
    const own = (await deps.settings.section<HookConfig[]>(owner, 'hooks')) ?? [];
    const out: HookTarget[] = own.filter((h) => selects(h, event, toolName)).map((hook) => ({ name: hook.name, hook }));
    if (!provider) return out;
    let sets: Awaited<ReturnType<PluginHookProvider['trustedHooks']>> = [];
    try {
      sets = await provider.trustedHooks();
    } catch (err) {
      deps.logger.warn({ err }, 'plugin hook provider failed; plugin hooks skipped');
    }
    if (sets.length === 0) return out;
    const trusted = await deps.trust.trustedIds(owner);
    for (const set of sets) {
      if (!trusted.has(set.pluginId)) continue;
      for (const hook of set.hooks) {
        if (!selects(hook, event, toolName)) continue;
        out.push({
          name: `plugin/${set.pluginId}/${hook.name}`,
          hook,
          cwd: set.root,
          env: { FENGYU_PLUGIN_ROOT: set.root, FENGYU_PLUGIN_DATA: set.dataDir, FENGYU_PLUGIN_ID: set.pluginId },
        });
      }
    }
    return out;
  }

  function envelope(event: HookEvent, call: ToolCall, extra: Record<string, unknown> = {}): Record<string, unknown> {
    const t = call.tool;
    return {
      event,
      tool: { name: t.name, id: t.id, effect: t.effect, source: t.source, ...(t.origin ? { origin: t.origin } : {}) },
      arguments: call.arguments,
      owner: call.owner,
      caller: call.caller,
      permissionMode: call.permissionMode,
      ...(call.runId ? { runId: call.runId } : {}),
      ...(call.stepId ? { stepId: call.stepId } : {}),
      ts: new Date(deps.clock.now()).toISOString(),
      ...extra,
    };
  }

  async function runAll(list: HookTarget[], body: (t: HookTarget) => Record<string, unknown>, signal?: AbortSignal): Promise<HookOutcome[]> {
    const outcomes: HookOutcome[] = [];
    for (const target of list) outcomes.push(await deps.hooks.run(target, { ...body(target), hook: target.name }, signal));
    return outcomes;
  }

  async function checkWithLookups(call: ToolCall, stop?: AbortSignal | { readonly signal: AbortSignal }): Promise<GuardDecision> {
    const audits: HookOutcome[] = [];
    let verdict: HookVerdict | undefined;
    let signal: AbortSignal | undefined;
    for (const target of await targets(call.owner, 'pre_tool_use', call.tool.name)) {
      signal ??= signalOf(stop);
      if (signal?.aborted) break;
      const outcome = await deps.hooks.run(target, { ...envelope('pre_tool_use', call), hook: target.name }, signal);
      audits.push(outcome);
      if (outcome.outcome === 'deny') {
        verdict = { decision: 'deny', hook: target.name, reason: outcome.reason ?? `denied by hook ${target.name}` };
        break;
      }
      if (outcome.outcome === 'ask' && !verdict) verdict = { decision: 'ask', hook: target.name, reason: outcome.reason ?? 'the hook asks for approval' };
      // an opt-in fail-closed hook that could not answer blocks the call (the default fails open)
      if ((outcome.outcome === 'failed' || outcome.outcome === 'timeout') && target.hook.failClosed) {
        verdict = { decision: 'deny', hook: target.name, reason: localize('approval_hook_failed_closed', { name: target.name, reason: outcome.reason ?? outcome.outcome }) };
        break;
      }
    }
    const callFacts = facts(call);
    const decision = evaluateCall(await parserFor(callFacts.name), { call: callFacts, mode: call.permissionMode, rules: await rulesOf(call.owner), ...(verdict ? { hook: verdict } : {}) });
    const { shell: _shell, ...rest } = decision;
    return { ...rest, ...(audits.length ? { audits: audits as unknown as Array<Record<string, unknown>> } : {}) };
  }

  return {
    check(call, signal) {
      try {
        const now = checkNow(call);
        return now ? Promise.resolve(now) : checkWithLookups(call, signal);
      } catch (err) {
        return Promise.reject(err);
      }
    },

    async observe(call: ToolCall, outcome: ToolOutcome) {
      const event: HookEvent = outcome.ok ? 'post_tool_use' : 'post_tool_use_failure';
      if (noHooksNow(call.owner, event, call.tool.name)) return [];
      const list = await targets(call.owner, event, call.tool.name);
      const extra = outcome.ok ? { result: outcome.result } : { error: outcome.error };
      return (await runAll(list, () => envelope(event, call, extra))) as unknown as Array<Record<string, unknown>>;
    },

    async runEnded(end: RunEnd) {
      const event: HookEvent = end.status === 'completed' ? 'run_complete' : 'run_error';
      if (noHooksNow(end.owner, event)) return [];
      const list = await targets(end.owner, event);
      const body = () => ({ event, owner: end.owner, runId: end.runId, run: { ...end }, ts: new Date(deps.clock.now()).toISOString() });
      return (await runAll(list, body)) as unknown as Array<Record<string, unknown>>;
    },

    usePluginHooks(p) {
      provider = p;
    },

    async dryRun(input) {
      const decision = evaluateCall(await parserFor(input.call.name), { call: input.call, mode: input.permissionMode, rules: await rulesOf(input.owner, input.rules) });
      const { shell: _shell, ...rest } = decision;
      return rest;
    },
  };
}

function selects(hook: HookConfig, event: HookEvent, toolName?: string): boolean {
  if (!hook.enabled || hook.event !== event) return false;
  return toolName === undefined || hookMatches(hook.matcher, toolName);
}

function facts(call: ToolCall): CallFacts {
  const t = call.tool;
  return { name: t.name, effect: t.effect, source: t.source, ...(t.origin ? { origin: t.origin } : {}), arguments: call.arguments };
}
