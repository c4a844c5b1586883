import { FengYuError, HOOK_EVENTS, type HookEvent } from '@fengyu/protocol';
import { RE2JS } from 're2js';
import { z } from 'zod';
import { globMatch } from './rules';

/**
 * Lifecycle hook configuration: the settings schema, the parser of
 * a plugin's `hooks/hooks.json` (grok-shaped or FengYu's flat list; exported so the plugins
 * domain validates it at install) and the tool-name matcher.
 */

export { HOOK_EVENTS, type HookEvent };

export const HookSchema = z
  .object({
    name: z.string().min(1).max(100),
    event: z.enum(HOOK_EVENTS),
    /** Tool-name glob (`*`, `?`), alternatives with `|`, or a regular expression as `/…/`. */
    matcher: z.string().max(500).default('*'),
    type: z.enum(['command', 'http']),
    command: z.string().min(1).max(8000).optional(),
    url: z.string().max(2000).optional(),
    timeoutSeconds: z.number().int().min(1).max(600).default(30),
    enabled: z.boolean().default(true),
    /**
     * Opt-in: a pre_tool_use hook that crashes, times out or answers something that is not a
     * verdict denies the call instead of letting it proceed (default: fail open).
     */
    failClosed: z.boolean().optional(),
    /** An http hook to a loopback, private, link-local or metadata address needs this (as for web_fetch). */
    allowPrivateNetwork: z.boolean().optional(),
  })
  .strict()
  .superRefine((h, ctx) => {
    if (h.type === 'command' && !h.command) ctx.addIssue({ code: 'custom', path: ['command'], message: 'a command hook needs "command"' });
    if (h.type === 'http') {
      if (!h.url) ctx.addIssue({ code: 'custom', path: ['url'], message: 'an http hook needs "url"' });
      else if (!/^https?:\/\/[^\s]+$/i.test(h.url) || !URL.canParse(h.url)) ctx.addIssue({ code: 'custom', path: ['url'], message: 'url must be an http(s) URL' });
    }
    if (h.failClosed && h.event !== 'pre_tool_use') ctx.addIssue({ code: 'custom', path: ['failClosed'], message: 'only a pre_tool_use hook can fail closed (other events cannot block a call)' });
    const bad = matcherProblem(h.matcher);
    if (bad) ctx.addIssue({ code: 'custom', path: ['matcher'], message: bad });
  });

export type HookConfig = z.output<typeof HookSchema>;
export const HooksSectionSchema = z.array(HookSchema).max(100);

/**
 * `/…/` matchers run on RE2's linear-time engine (re2js, pure JavaScript): a hook matcher is
 * evaluated on the event loop for every tool call, and a backtracking pattern such as
 * `/(a+)+$/` froze the host for seconds per call. RE2 syntax is JavaScript's without
 * backreferences and lookaround; a pattern RE2 cannot compile is refused when saved.
 */
const compiled = new Map<string, RE2JS | null>();
const MAX_COMPILED = 256;

function re2Of(source: string): RE2JS | null {
  let re = compiled.get(source);
  if (re !== undefined) return re;
  try {
    re = RE2JS.compile(source);
  } catch {
    re = null;
  }
  if (compiled.size >= MAX_COMPILED) compiled.clear();
  compiled.set(source, re);
  return re;
}

function matcherProblem(matcher: string): string | undefined {
  if (!(matcher.startsWith('/') && matcher.endsWith('/') && matcher.length > 1)) return undefined;
  try {
    RE2JS.compile(matcher.slice(1, -1));
    return undefined;
  } catch (err) {
    return `invalid regular expression (RE2 syntax, linear time: no backreferences or lookaround): ${(err as Error).message}`;
  }
}

/** Whether a hook's matcher selects a tool name. Run events ignore the matcher. */
export function hookMatches(matcher: string, toolName: string): boolean {
  const m = matcher.trim();
  if (m === '' || m === '*') return true;
  if (m.length > 1 && m.startsWith('/') && m.endsWith('/')) return re2Of(m.slice(1, -1))?.matcher(toolName).find() ?? false;
  return m.split('|').some((alt) => globMatch(alt.trim(), toolName));
}

const GROK_EVENTS: Record<string, HookEvent> = {
  PreToolUse: 'pre_tool_use',
  PostToolUse: 'post_tool_use',
  PostToolUseFailure: 'post_tool_use_failure',
  RunComplete: 'run_complete',
  Stop: 'run_complete',
  RunError: 'run_error',
};

const GrokEntry = z.object({
  matcher: z.string().optional(),
  hooks: z.array(
    z.object({
      type: z.enum(['command', 'http']).default('command'),
      name: z.string().optional(),
      command: z.string().optional(),
      url: z.string().optional(),
      timeout: z.number().optional(),
      timeoutSeconds: z.number().optional(),
      enabled: z.boolean().optional(),
    }),
  ),
});

/**
 * Parses a plugin's hooks.json: `{"hooks":{"PreToolUse":[{matcher, hooks:[{type, command, timeout}]}]}}`
 * (grok/Claude-shaped), or a flat list `[{name, event, matcher, type, command|url, …}]`
 * (also as `{"hooks":[…]}`). Throws `invalid_plugin_hooks` naming the first problem.
 */
export function parsePluginHooks(pluginId: string, doc: unknown): HookConfig[] {
  const fail = (reason: string): never => {
    throw new FengYuError('invalid_plugin_hooks', { pluginId, reason });
  };
  const body = doc && typeof doc === 'object' && !Array.isArray(doc) && 'hooks' in doc ? (doc as { hooks: unknown }).hooks : doc;
  const raw: unknown[] = [];
  if (Array.isArray(body)) raw.push(...body);
  else if (body && typeof body === 'object') {
    for (const [key, entries] of Object.entries(body)) {
      const event = GROK_EVENTS[key] ?? ((HOOK_EVENTS as readonly string[]).includes(key) ? (key as HookEvent) : undefined);
      if (!event) fail(`unknown hook event "${key}"`);
      if (!Array.isArray(entries)) fail(`"${key}" must be a list`);
      (entries as unknown[]).forEach((entry, i) => {
        const parsed = GrokEntry.safeParse(entry);
        if (!parsed.success) fail(`${key}[${i}]: ${parsed.error.issues[0]?.message ?? 'invalid'}`);
        const { matcher, hooks } = parsed.data as z.output<typeof GrokEntry>;
        hooks.forEach((h, j) => {
          raw.push({
            name: h.name ?? `${event}-${i + 1}-${j + 1}`,
            event,
            matcher: matcher ?? '*',
            type: h.type,
            ...(h.command !== undefined ? { command: h.command } : {}),
            ...(h.url !== undefined ? { url: h.url } : {}),
            timeoutSeconds: Math.min(600, Math.max(1, Math.round(h.timeoutSeconds ?? h.timeout ?? 30))),
            ...(h.enabled !== undefined ? { enabled: h.enabled } : {}),
          });
        });
      });
    }
  } else fail('expected {"hooks": {…}} or a list of hooks');
  const out: HookConfig[] = [];
  raw.forEach((h, i) => {
    const parsed = HookSchema.safeParse(h);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      fail(`hook ${i + 1}${issue?.path.length ? ` ${issue.path.join('.')}` : ''}: ${issue?.message ?? 'invalid'}`);
    }
    // Only the user opts into private addresses: a plugin's own hooks file cannot.
    const { allowPrivateNetwork: _ignored, ...hook } = parsed.data as HookConfig;
    out.push(hook as HookConfig);
  });
  const names = new Set<string>();
  for (const h of out) {
    if (names.has(h.name)) fail(`hook name "${h.name}" is used twice`);
    names.add(h.name);
  }
  return out;
}
