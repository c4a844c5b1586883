import { APPROVAL_TEXT_CODES, FLOOR_REASON_CODES } from './approvals';
import { type Locale, localize, MESSAGES } from './index';

/**
 * Texts the host writes into a run's record in English (its summary, a step's error, an
 * approval's reason) are made from the tables' English messages; `hostText` reads such a text
 * back into its message and parameters and says it in another language — the run texts first,
 * then any other message of the tables (a tool's error inside a step failure). A text that
 * matches no known message (a model's summary, a tool's own words) is shown as written.
 */

/** The messages a run's record may hold, most specific first. */
export const HOST_TEXT_CODES = [
  'run_summary_plain_goal',
  'run_summary_plain',
  'run_failed_step',
  'run_failed',
  'approval_mode_ask',
  'approval_mode_allows',
  'ref_unresolved_file',
  'ref_unresolved_input',
  'ref_unresolved_step',
  'ref_unresolved_secret',
  'ref_unresolved',
  'step_timeout',
  'tool_timeout',
  'tool_failed',
  'tool_not_found',
  'permission_denied',
  'command_exit_nonzero',
  'command_timeout',
  'command_killed',
  'foreach_items_not_array',
  'foreach_too_many_items',
  ...APPROVAL_TEXT_CODES,
  ...FLOOR_REASON_CODES,
];

/** Parameters whose value may itself be a host text (read back in turn). */
const NESTED = new Set(['reason']);

const escapeRegex = (s: string) => s.replace(/[.*+?^$()|[\]\\]/g, '\\$&');

let compiled: Array<{ code: string; re: RegExp; names: string[] }> | undefined;

/** An English template as a pattern that reads its parameters back out of a text. */
function templatePattern(template: string): { re: RegExp; names: string[] } {
  const names: string[] = [];
  const source = template
    .split(/(\{\w+\})/)
    .map((part) => {
      const m = /^\{(\w+)\}$/.exec(part);
      if (!m) return escapeRegex(part).replace(/[{}]/g, '\\$&');
      names.push(m[1] as string);
      return '([\\s\\S]*?)';
    })
    .join('');
  return { re: new RegExp(`^${source}$`), names };
}

function patterns() {
  compiled ??= HOST_TEXT_CODES.flatMap((code) => {
    const template = MESSAGES.en[code];
    return template ? [{ code, ...templatePattern(template) }] : [];
  });
  return compiled;
}

/**
 * Every other message of the tables (a tool's error, a plugin's, a refusal), most literal text
 * first, for a host text that is none of the run texts above: a step failure's reason is often
 * one. A template that is mostly placeholders (under 8 literal characters) is never read back.
 */
let compiledAll: Array<{ code: string; re: RegExp; names: string[] }> | undefined;
function allPatterns() {
  const skip = new Set(HOST_TEXT_CODES);
  compiledAll ??= Object.entries(MESSAGES.en)
    .map(([code, template]) => ({ code, template, literal: template.replace(/\{\w+\}/g, '').length }))
    .filter((x) => !skip.has(x.code) && x.literal >= 8)
    .sort((a, b) => b.literal - a.literal)
    .map(({ code, template }) => ({ code, ...templatePattern(template) }));
  return compiledAll;
}

const paramsOf = (m: RegExpExecArray, names: string[], locale: Locale, depth: number) =>
  Object.fromEntries(names.map((n, i) => [n, NESTED.has(n) ? hostText(m[i + 1] ?? '', locale, depth + 1) : (m[i + 1] ?? '')]));

/** `text` in `locale` when it is one of the host's own English run texts; otherwise `text` as is. */
export function hostText(text: string, locale: Locale, depth = 0): string {
  if (locale === 'en' || !text || depth > 3) return text;
  const key = `${locale}\u0000${text}`;
  const known = said.get(key);
  if (known !== undefined) return known;
  const out = readBack(text, locale, depth);
  if (said.size >= SAID_MAX) said.delete(said.keys().next().value as string);
  said.set(key, out);
  return out;
}

/** Texts already said (a page re-renders the same ones), oldest dropped first. */
const said = new Map<string, string>();
const SAID_MAX = 500;
/** Longer texts are a model's or a tool's words, not one of the tables' messages: never matched against them all. */
const MESSAGE_MAX = 2000;

function readBack(text: string, locale: Locale, depth: number): string {
  for (const list of text.length <= MESSAGE_MAX ? [patterns(), allPatterns()] : [patterns()]) {
    for (const { code, re, names } of list) {
      const m = re.exec(text);
      if (!m) continue;
      return localize(code, paramsOf(m, names, locale, depth), locale);
    }
  }
  return text;
}

/**
 * A recorded error (a task's, a delivery's, a schedule's last fire) in `locale`: its code's
 * message when that needs no parameters; else the recorded English message read back with the
 * code's own template (the parameters it was written with) and said in `locale`; else a known
 * host text; else the message as recorded (a tool's own words). Never the bare code when the
 * host recorded a sentence.
 */
export function hostErrorText(err: { code: string; message: string }, locale: Locale): string {
  const template = MESSAGES[locale][err.code];
  if (template && !/\{\w+\}/.test(template)) return template;
  const english = MESSAGES.en[err.code];
  if (english && err.message && err.message !== err.code) {
    const { re, names } = templatePattern(english);
    const m = re.exec(err.message);
    if (m) return localize(err.code, paramsOf(m, names, locale, 0), locale);
  }
  if (err.message && err.message !== err.code) return hostText(err.message, locale);
  return english ? localize(err.code, {}, locale) : err.message || err.code;
}
