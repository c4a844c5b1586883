import { localize, type PermissionMode } from '@fengyu/protocol';
import type { FloorHit } from './floor';
import { modeDefault } from './mode-default';
import { type CallFacts, COMMAND_TOOL, commandRuleMatches, type Rule, type RuleSet, ruleMatchesCall, type SegmentWords } from './rules';
import type { Segment, ShellAnalysis } from './shell';
import { gitCanonical } from './git';
import { basename, isWrapper } from './wrappers';
import type { GuardDecision } from './types';

/**
 * The guard's decision, pure: PreToolUse hooks → deny rules → ask rules → allow
 * rules → the permission mode's default. Deny beats allow whatever the order of the lines.
 *
 * For `execute_command`, a deny or ask rule matches when ANY segment (any layer of it: the
 * wrapper, the wrapped command, `/bin/rm` as `rm`) could match; an allow rule set grants only
 * when EVERY segment is covered by some allow rule, nothing is opaque and nothing is on the
 * dangerous-command floor. Floor and opaque commands ask in every mode, full-access included
 * (those always ask): full access never silently runs rm, sudo or an interpreter.
 */

export interface HookVerdict {
  decision: 'deny' | 'ask';
  hook: string;
  reason: string;
}

export interface DecideInput {
  call: CallFacts;
  mode: PermissionMode;
  rules: RuleSet;
  /** The analysed command line (execute_command only). */
  shell?: ShellAnalysis;
  /** Its floor hit, if any (`floorHit(shell)`). */
  floor?: FloorHit;
  /** The first pre_tool_use hook that did not let the call proceed. */
  hook?: HookVerdict;
}

export function decide(input: DecideInput): GuardDecision {
  const { call, rules, hook } = input;
  if (hook?.decision === 'deny') return { decision: 'deny', source: 'hook', rule: hook.hook, reason: hook.reason };
  const isCommand = call.name === COMMAND_TOOL;
  const shell = isCommand ? input.shell : undefined;

  const denied = firstMatch(rules.deny, call, shell);
  if (denied) return { decision: 'deny', source: 'deny', rule: denied.rule.text, reason: ruleReason('approval_rule_denies', denied) };
  if (hook) return { decision: 'ask', source: 'hook', rule: hook.hook, reason: hook.reason };
  const asked = firstMatch(rules.ask, call, shell);
  if (asked) return { decision: 'ask', source: 'ask', rule: asked.rule.text, reason: ruleReason('approval_rule_asks', asked) };

  if (isCommand) {
    const unsafe = unsafeReason(input);
    if (unsafe) {
      return { decision: 'ask', source: 'floor', reason: unsafe };
    }
    const covering = coverAll(rules.allow, call, shell);
    if (covering) return { decision: 'allow', source: 'allow', rule: covering, reason: localize('approval_rule_allows_all', { rule: covering }) };
    return modeDefault(input.mode, call.effect);
  }
  const allowed = rules.allow.find((r) => ruleMatchesCall(r, call));
  if (allowed) return { decision: 'allow', source: 'allow', rule: allowed.text, reason: localize('approval_rule_allows', { rule: allowed.text }) };
  return modeDefault(input.mode, call.effect);
}

/** A rule's reason in the tables' English (read back into the UI's language): `…_at` names the matched command. */
function ruleReason(code: 'approval_rule_denies' | 'approval_rule_asks', hit: { rule: Rule; where?: string }): string {
  return hit.where ? localize(`${code}_at`, { rule: hit.rule.text, command: hit.where }) : localize(code, { rule: hit.rule.text });
}

function unsafeReason(input: DecideInput): string | undefined {
  if (!input.shell) return localize('approval_command_unanalysed');
  const opaque = input.shell.opaque[0] ?? input.shell.segments.find((s) => s.opaque)?.opaque;
  if (opaque) return localize('approval_command_opaque', { detail: opaque });
  if (input.floor) return localize('approval_command_floor', { command: input.floor.command, reason: input.floor.reason });
  return undefined;
}

/** Deny/ask: the first rule matching the call, or any layer of any segment. */
function firstMatch(list: Rule[], call: CallFacts, shell: ShellAnalysis | undefined): { rule: Rule; where?: string } | undefined {
  for (const rule of list) {
    if (ruleMatchesCall(rule, call, 'maybe')) return { rule };
    if (rule.kind !== 'command' || !shell) continue;
    for (const seg of shell.segments) {
      const layer = seg.layers.find((l) => maybeMatches(rule, l));
      if (layer) return { rule, where: display(layer) };
    }
  }
  return undefined;
}

/**
 * Deny/ask rules match a layer as written, by its command's basename (`/usr/bin/git`), as git
 * without its global options (`git -C x push` is `git push`), and, for a program that runs its
 * arguments (a wrapper whose options could not be read), at every later word: whatever it may
 * run can be named by a deny rule.
 */
function maybeMatches(rule: Rule & { kind: 'command' }, layer: SegmentWords): boolean {
  const first = layer.words[0] ?? '';
  const base = basename(first.normalize('NFKC'));
  const named = base === first ? layer : { ...layer, words: [base, ...layer.words.slice(1)] };
  if (commandRuleMatches(rule.match, layer, 'maybe') || commandRuleMatches(rule.match, named, 'maybe')) return true;
  if (base === 'git') {
    const canonical = gitCanonical(named);
    if (canonical && commandRuleMatches(rule.match, canonical, 'maybe')) return true;
  }
  if (isWrapper(base)) {
    for (let k = 1; k < layer.words.length; k++) {
      if (layer.dynamic[k]) continue;
      const inner = { words: layer.words.slice(k), dynamic: layer.dynamic.slice(k), trailingDynamic: layer.trailingDynamic };
      const innerBase = basename(inner.words[0] as string);
      const innerNamed = { ...inner, words: [innerBase, ...inner.words.slice(1)] };
      if (innerBase !== '' && !innerBase.startsWith('-') && commandRuleMatches(rule.match, innerNamed, 'maybe')) return true;
    }
  }
  return false;
}

/** Allow: the rule text when every segment is covered (joined when several rules cover). */
function coverAll(allow: Rule[], call: CallFacts, shell: ShellAnalysis | undefined): string | undefined {
  const blanket = allow.find((r) => ruleMatchesCall(r, call));
  if (blanket) return blanket.text;
  if (!shell || shell.segments.length === 0) return undefined;
  const used = new Set<string>();
  for (const seg of shell.segments) {
    const rule = allow.find((r) => r.kind === 'command' && commandRuleMatches(r.match, seg, 'surely'));
    if (!rule) return undefined;
    used.add(rule.text);
  }
  return [...used].join(', ');
}

function display(seg: SegmentWords | Segment): string {
  const text = seg.words.join(' ');
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}
