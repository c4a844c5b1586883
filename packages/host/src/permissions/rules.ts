import type { ToolEffect } from '@fengyu/protocol';
import { TOOL_EFFECTS } from '@fengyu/protocol';
import { type GlobMatcher, globMatcher, globMatches } from './glob';

/**
 * Permission rule lines, parsed into
 * values and matched against tool calls. Pure: no I/O. Shell segments come from `shell.ts`;
 * this module only says whether one rule covers one segment or one call.
 *
 *   Command(git status)   word-boundary prefix       Command(git:*)  word-boundary prefix (same)
 *   Command(git st*)      glob over the segment text Command / Bash  every command
 *   Bash(…)               alias of Command(…)
 *   Tool(excel_*)         tool-name glob             Effect(read)    every tool with that effect
 *   Mcp(github__*)        MCP qualified-name glob    mcp__github     every tool of MCP server github
 *   mcp__github__issue    one MCP tool               WebFetch(domain:example.com) host or subdomain
 *   WebFetch              every web_fetch / web_search call
 */

export type Rule =
  | { kind: 'command'; text: string; match: CommandPattern }
  | { kind: 'tool'; text: string; glob: string; matcher: GlobMatcher }
  | { kind: 'effect'; text: string; effect: ToolEffect }
  | { kind: 'mcp'; text: string; glob: string; matcher: GlobMatcher }
  | { kind: 'webfetch'; text: string; domain?: string };

/**
 * `all`: bare Command; `prefix`: the words, then any further words (a word-boundary prefix:
 * `Command(git status)` and `Command(git status:*)` both match `git status --short`, never
 * `git statusx`); `glob`: `*`/`?` over the segment's words joined by one space.
 */
export type CommandPattern =
  | { type: 'all' }
  | { type: 'prefix'; words: string[] }
  | { type: 'glob'; glob: string; matcher: GlobMatcher };

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
/** Tools whose target hosts WebFetch(domain:…) rules see: the web tools and browser navigation. */
export const WEB_TOOLS: readonly string[] = ['web_fetch', 'web_search', 'browser_navigate'];

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
    return { kind: 'mcp', text, glob, matcher: globMatcher(glob) };
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
      return { kind: 'tool', text, glob: pattern, matcher: globMatcher(pattern) };
    case 'Mcp':
      return { kind: 'mcp', text, glob: pattern, matcher: globMatcher(pattern) };
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
    return { type: 'glob', glob, matcher: globMatcher(glob) };
  }
  return { type: 'prefix', words: splitWords(pattern) };
}

function splitWords(text: string): string[] {
  return text.split(/\s+/).filter((w) => w !== '');
}

export function globMatch(glob: string, value: string): boolean {
  return globMatches(glob, value);
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
export function ruleMatchesCall(rule: Rule, call: CallFacts, mode: 'surely' | 'maybe' = 'surely'): boolean {
  switch (rule.kind) {
    case 'tool':
      return rule.matcher.test(call.name);
    case 'effect':
      return call.effect === rule.effect;
    case 'mcp':
      return call.source === 'mcp' && rule.matcher.test(call.name);
    case 'webfetch':
      return webFetchMatches(rule.domain, call, mode);
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

/**
 * A domain rule as an allow rule (`surely`) covers a call only when EVERY host it targets is the
 * domain or a subdomain; as a deny or ask rule (`maybe`) it matches when ANY host involved is:
 * the targets, and the hosts of URLs carried inside the URL (`?next=https://…`, which an open
 * redirect would follow).
 */
function webFetchMatches(domain: string | undefined, call: CallFacts, mode: 'surely' | 'maybe'): boolean {
  if (!WEB_TOOLS.includes(call.name)) return false;
  if (domain === undefined) return true;
  const inside = (h: string) => hostInDomain(h, domain);
  if (mode === 'maybe') return [...webHosts(call.arguments), ...embeddedHosts(call.arguments.url)].some(inside);
  const hosts = webHosts(call.arguments);
  return hosts.length > 0 && hosts.every(inside);
}

export function hostInDomain(host: string, domain: string): boolean {
  const h = host.toLowerCase().replace(/\.+$/, '');
  return h === domain || h.endsWith(`.${domain}`);
}

/** Hosts of http(s) URLs found inside a URL (decoded query values, fragments, paths). */
export function embeddedHosts(url: unknown): string[] {
  if (typeof url !== 'string') return [];
  let text = url;
  for (let i = 0; i < 3; i++) {
    try {
      const decoded = decodeURIComponent(text);
      if (decoded === text) break;
      text = decoded;
    } catch {
      break;
    }
  }
  const hosts: string[] = [];
  for (const m of text.slice(1).matchAll(/(?:https?:)?\/\/[^\s/?#&"'<>\\]+/gi)) {
    try {
      const u = new URL(m[0].startsWith('//') ? `https:${m[0]}` : m[0]);
      hosts.push(u.hostname.toLowerCase().replace(/\.$/, ''));
    } catch {
      // not a URL
    }
  }
  return hosts;
}

/**
 * The first deny rule naming `url`'s host (any-host logic), for a fetch that follows a redirect:
 * each hop's URL is checked again with this.
 */
export function deniedWebHost(rules: RuleSet, toolName: string, url: string): Rule | undefined {
  const call: CallFacts = { name: toolName, effect: 'read', source: 'builtin', arguments: { url } };
  return rules.deny.find((r) => r.kind === 'webfetch' && webFetchMatches(r.domain, call, 'maybe'));
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
    case 'prefix':
      return wordsMatch(pattern.words, seg, mode);
    case 'glob': {
      if (mode === 'surely' && seg.trailingDynamic && !pattern.glob.endsWith('*')) return false;
      if (pattern.matcher.test(seg.words.join(' '))) return true;
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

function wordsMatch(pattern: string[], seg: SegmentWords, mode: 'surely' | 'maybe'): boolean {
  const { words, dynamic } = seg;
  for (let i = 0; i < pattern.length; i++) {
    // `maybe`: arguments appended at run time (xargs, find -exec … +) may supply the rest.
    if (i >= words.length) return mode === 'maybe' && seg.trailingDynamic;
    if (dynamic[i]) {
      // A dynamic word may expand to anything, even several words: it can match the rest.
      if (mode === 'maybe') return true;
      return false;
    }
    if (words[i] !== pattern[i]) return false;
  }
  return true;
}
