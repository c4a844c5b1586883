import type { ToolEffect } from '@fengyu/protocol';
import { TOOL_EFFECTS } from '@fengyu/protocol';

/**
 * Permission rule lines (seed 000 "Permission rules & lifecycle hooks", SPEC §7), parsed into
 * values and matched against tool calls. Pure: no I/O. Shell segments come from `shell.ts`;
 * this module only says whether one rule covers one segment or one call.
 *
 *   Command(git status)   exact command words        Command(git:*)  word-boundary prefix
 *   Command(git st*)      glob over the segment text Command / Bash  every command
 *   Bash(…)               alias of Command(…)
 *   Tool(excel_*)         tool-name glob             Effect(read)    every tool with that effect
 *   Mcp(github__*)        MCP qualified-name glob    mcp__github     every tool of MCP server github
 *   mcp__github__issue    one MCP tool               WebFetch(domain:example.com) host or subdomain
 *   WebFetch              every web_fetch / web_search call
 */

export type Rule =
  | { kind: 'command'; text: string; match: CommandPattern }
  | { kind: 'tool'; text: string; glob: string; regex: RegExp }
  | { kind: 'effect'; text: string; effect: ToolEffect }
  | { kind: 'mcp'; text: string; glob: string; regex: RegExp }
  | { kind: 'webfetch'; text: string; domain?: string };

/** `all`: bare Command; `exact`: the words; `prefix`: the words then anything; `glob`: `*`/`?` over the text. */
export type CommandPattern =
  | { type: 'all' }
  | { type: 'exact'; words: string[] }
  | { type: 'prefix'; words: string[] }
  | { type: 'glob'; glob: string; regex: RegExp };

export interface RuleProblem {
  /** 1-based line of the rule in its list. */
  line: number;
  text: string;
  reason: string;
}

export interface RuleSet {
  deny: Rule[];
  ask: Rule[];
  allow: Rule[];
}

export interface RuleLines {
  deny?: readonly string[];
  ask?: readonly string[];
  allow?: readonly string[];
}

export const COMMAND_TOOL = 'execute_command';
export const WEB_TOOLS: readonly string[] = ['web_fetch', 'web_search'];

const PREFIXES = ['Command', 'Bash', 'Tool', 'Effect', 'Mcp', 'WebFetch'] as const;

/** Parses one rule line: a Rule, or the reason it is malformed. */
export function parseRule(line: string): Rule | { error: string } {
  const text = line.trim();
  if (text === '') return { error: 'empty rule' };
  if (/[\r\n]/.test(text)) return { error: 'a rule is a single line' };
  const mcpShort = /^mcp__([A-Za-z0-9_-]+?)(?:__(.+))?$/.exec(text);
  if (mcpShort) {
    const server = mcpShort[1] as string;
    const glob = mcpShort[2] ? `${server}__${mcpShort[2]}` : `${server}__*`;
    return { kind: 'mcp', text, glob, regex: globRegex(glob) };
  }
  const open = text.indexOf('(');
  const head = open < 0 ? text : text.slice(0, open);
  if (!(PREFIXES as readonly string[]).includes(head)) {
    return { error: `unknown rule kind "${head}" (expected one of ${PREFIXES.join(', ')} or mcp__<server>)` };
  }
  if (open < 0) {
    if (head === 'Command' || head === 'Bash') return { kind: 'command', text, match: { type: 'all' } };
    if (head === 'WebFetch') return { kind: 'webfetch', text };
    return { error: `${head} needs a pattern: ${head}(…)` };
  }
  if (!text.endsWith(')')) return { error: 'missing closing parenthesis ")"' };
  const pattern = text.slice(open + 1, -1).trim();
  if (pattern === '') return { error: 'empty pattern' };
  switch (head) {
    case 'Command':
    case 'Bash':
      return { kind: 'command', text, match: parseCommandPattern(pattern) };
    case 'Tool':
      return { kind: 'tool', text, glob: pattern, regex: globRegex(pattern) };
    case 'Mcp':
      return { kind: 'mcp', text, glob: pattern, regex: globRegex(pattern) };
    case 'Effect':
      if (!(TOOL_EFFECTS as readonly string[]).includes(pattern)) {
        return { error: `unknown effect "${pattern}" (expected ${TOOL_EFFECTS.join(', ')})` };
      }
      return { kind: 'effect', text, effect: pattern as ToolEffect };
    default: {
      const m = /^domain:([A-Za-z0-9.-]+)$/.exec(pattern);
      if (!m) return { error: 'expected WebFetch(domain:<host>)' };
      return { kind: 'webfetch', text, domain: (m[1] as string).toLowerCase().replace(/^\.+|\.+$/g, '') };
    }
  }
}

function parseCommandPattern(pattern: string): CommandPattern {
  if (pattern === '*' || pattern === ':*') return { type: 'all' };
  if (pattern.endsWith(':*')) {
    const words = splitWords(pattern.slice(0, -2));
    return words.length ? { type: 'prefix', words } : { type: 'all' };
  }
  if (/[*?]/.test(pattern)) {
    const glob = splitWords(pattern).join(' ');
    return { type: 'glob', glob, regex: globRegex(glob) };
  }
  return { type: 'exact', words: splitWords(pattern) };
}

function splitWords(text: string): string[] {
  return text.split(/\s+/).filter((w) => w !== '');
}

/** `*` any run of characters, `?` one character; everything else literal; anchored. */
export function globRegex(glob: string): RegExp {
  const body = glob.replace(/[.+^${}()|[\]\\*?]/g, (c) => (c === '*' ? '.*' : c === '?' ? '.' : `\\${c}`));
  return new RegExp(`^${body}$`, 's');
}

export function globMatch(glob: string, value: string): boolean {
  return globRegex(glob).test(value);
}

/** Parses the three lists; every malformed line is reported with its list and line number. */
export function parseRuleLines(lines: RuleLines): { rules: RuleSet; problems: Array<RuleProblem & { list: keyof RuleSet }> } {
  const rules: RuleSet = { deny: [], ask: [], allow: [] };
  const problems: Array<RuleProblem & { list: keyof RuleSet }> = [];
  for (const list of ['deny', 'ask', 'allow'] as const) {
    (lines[list] ?? []).forEach((text, i) => {
      const parsed = parseRule(text);
      if ('error' in parsed) problems.push({ list, line: i + 1, text, reason: parsed.error });
      else rules[list].push(parsed);
    });
  }
  return { rules, problems };
}

/** What a non-command rule sees of a call. */
export interface CallFacts {
  name: string;
  effect: ToolEffect;
  source: string;
  origin?: string;
  arguments: Record<string, unknown>;
}

/**
 * Whether `rule` covers the call as a whole. Command rules cover a call only when they are
 * blanket (`Command`); per-segment coverage is `commandRuleMatches`.
 */
export function ruleMatchesCall(rule: Rule, call: CallFacts): boolean {
  switch (rule.kind) {
    case 'tool':
      return rule.regex.test(call.name);
    case 'effect':
      return call.effect === rule.effect;
    case 'mcp':
      return call.source === 'mcp' && rule.regex.test(call.name);
    case 'webfetch':
      return webFetchMatches(rule.domain, call);
    case 'command':
      return call.name === COMMAND_TOOL && rule.match.type === 'all';
  }
}

/** Hosts a web tool call targets: `url` (web_fetch), `site`/`domain`/`domains` (web_search). */
export function webHosts(args: Record<string, unknown>): string[] {
  const hosts: string[] = [];
  const add = (v: unknown) => {
    if (typeof v !== 'string' || v === '') return;
    try {
      hosts.push(new URL(v.includes('://') ? v : `https://${v}`).hostname.toLowerCase().replace(/\.$/, ''));
    } catch {
      hosts.push(`invalid:${v}`);
    }
  };
  add(args.url);
  add(args.site);
  add(args.domain);
  if (Array.isArray(args.domains)) for (const d of args.domains) add(d);
  return hosts;
}

function webFetchMatches(domain: string | undefined, call: CallFacts): boolean {
  if (!WEB_TOOLS.includes(call.name)) return false;
  if (domain === undefined) return true;
  const hosts = webHosts(call.arguments);
  return hosts.length > 0 && hosts.every((h) => h === domain || h.endsWith(`.${domain}`));
}

/** One shell segment as rules see it (from `shell.ts`). */
export interface SegmentWords {
  /** Words of the command; `dynamic[i]` marks a word whose value is only known at run time. */
  words: string[];
  dynamic: boolean[];
  /** Extra arguments appended at run time (xargs, find -exec … +). */
  trailingDynamic: boolean;
}

/**
 * Whether a command rule matches a segment. `mode: 'surely'` (allow rules) requires a match
 * whatever the run-time values are; `mode: 'maybe'` (deny/ask rules) matches when some value
 * of the dynamic words would match, so a variable cannot smuggle a denied command past a rule.
 */
export function commandRuleMatches(pattern: CommandPattern, seg: SegmentWords, mode: 'surely' | 'maybe'): boolean {
  switch (pattern.type) {
    case 'all':
      return true;
    case 'exact':
      if (mode === 'surely' && seg.trailingDynamic) return false;
      return wordsMatch(pattern.words, seg, mode, true);
    case 'prefix':
      return wordsMatch(pattern.words, seg, mode, false);
    case 'glob': {
      if (mode === 'surely' && seg.trailingDynamic && !pattern.glob.endsWith('*')) return false;
      if (pattern.regex.test(seg.words.join(' '))) return true;
      return mode === 'maybe' && seg.dynamic.some(Boolean) && globHeadFits(pattern.glob, seg);
    }
  }
}

/** `maybe`: a glob could match when the words before the first dynamic one fit its literal head. */
function globHeadFits(glob: string, seg: SegmentWords): boolean {
  const head = seg.words.slice(0, seg.dynamic.indexOf(true)).join(' ');
  const literal = glob.split(/[*?]/)[0] ?? '';
  return literal.startsWith(head) || head.startsWith(literal);
}

function wordsMatch(pattern: string[], seg: SegmentWords, mode: 'surely' | 'maybe', exact: boolean): boolean {
  const { words, dynamic } = seg;
  for (let i = 0; i < pattern.length; i++) {
    if (i >= words.length) return false;
    if (dynamic[i]) {
      // A dynamic word may expand to anything, even several words: it can match the rest.
      if (mode === 'maybe') return true;
      return false;
    }
    if (words[i] !== pattern[i]) return false;
  }
  if (!exact) return true;
  if (words.length === pattern.length) return true;
  // `maybe`: extra words that may expand to nothing (an unquoted "$EMPTY") still match exactly.
  return mode === 'maybe' && dynamic.slice(pattern.length).every(Boolean);
}
