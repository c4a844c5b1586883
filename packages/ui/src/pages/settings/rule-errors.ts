/**
 * Maps the problems of a rejected `PATCH /api/settings` (400 `details[]`) onto the three rule
 * text areas (deny / ask / allow) by 1-based line number, so the Settings page can flag the
 * exact line. The host names the list and line in the problem's params (`{list, line}`) or in its
 * field (`permissions.deny[2]` or a zod path `permissions.deny.2`, both 0-based indexes); a message saying "line N" is the last resort.
 */

export const RULE_LISTS = ['deny', 'ask', 'allow'] as const;
export type RuleList = (typeof RULE_LISTS)[number];

export interface RuleLineError {
  list: RuleList;
  line: number;
  message: string;
}

/** The text area's content as the list the host stores: one rule per line, blanks dropped. */
export function textToRules(text: string): string[] {
  return text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter((l) => l !== '');
}

export function rulesToText(rules: readonly string[] | undefined): string {
  return (rules ?? []).join('\n');
}

/** 1-based line numbers in the text area of each non-blank line (the host counts rules, not lines). */
export function ruleLineNumbers(text: string): number[] {
  const out: number[] = [];
  text.split(/\r?\n/).forEach((l, i) => {
    if (l.trim() !== '') out.push(i + 1);
  });
  return out;
}

const isList = (v: unknown): v is RuleList => typeof v === 'string' && (RULE_LISTS as readonly string[]).includes(v);

function locate(p: Record<string, unknown>): { list: RuleList; rule: number } | undefined {
  const params = (p.params && typeof p.params === 'object' ? p.params : {}) as Record<string, unknown>;
  for (const src of [params, p]) {
    const line = Number(src.line);
    if (isList(src.list) && Number.isInteger(line) && line > 0) return { list: src.list, rule: line };
  }
  const field = typeof p.field === 'string' ? p.field : '';
  const bracket = /(?:^|\.)(deny|ask|allow)\[(\d+)\]/.exec(field);
  if (bracket) return { list: bracket[1] as RuleList, rule: Number(bracket[2]) + 1 };
  const dotted = /(?:^|\.)(deny|ask|allow)\.(\d+)(?:$|\.)/.exec(field);
  if (dotted) return { list: dotted[1] as RuleList, rule: Number(dotted[2]) + 1 };
  const listOnly = /(?:^|\.)(deny|ask|allow)$/.exec(field);
  const inMessage = /line (\d+)/i.exec(String(p.message ?? ''));
  const list = listOnly?.[1] ?? (isList(params.list) ? params.list : undefined);
  if (list && inMessage) return { list: list as RuleList, rule: Number(inMessage[1]) };
  return undefined;
}

/**
 * The line errors of a settings 400. `texts` are the current text areas, so a rule number is
 * turned into the line the user sees (blank lines in the text area are skipped by the host).
 * Problems that name no rule line are returned in `other`.
 */
export function mapRuleErrors(details: unknown, texts: Record<RuleList, string>): { lines: RuleLineError[]; other: string[] } {
  const lines: RuleLineError[] = [];
  const other: string[] = [];
  if (!Array.isArray(details)) return { lines, other };
  for (const raw of details) {
    if (!raw || typeof raw !== 'object') continue;
    const p = raw as Record<string, unknown>;
    const message = String(p.message ?? p.code ?? '');
    const at = locate(p);
    if (!at) {
      other.push(typeof p.field === 'string' && p.field ? `${p.field}: ${message}` : message);
      continue;
    }
    const numbers = ruleLineNumbers(texts[at.list] ?? '');
    // the host's message may start with its own "line N:" (a rule number); the page shows the text-area line instead
    lines.push({ list: at.list, line: numbers[at.rule - 1] ?? at.rule, message: message.replace(/^line \d+:\s*/i, '') });
  }
  return { lines, other };
}
