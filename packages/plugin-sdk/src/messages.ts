import { ToolError } from './worker';

/**
 * Localized tool errors for plugin authors: one English and one Simplified Chinese message table
 * with `{param}` placeholders. The error's message is the English text; its data carries the
 * code, the parameters and the Chinese text (`messageZh`), which the host shows in a Chinese UI.
 */

export type MessageTable<C extends string> = Readonly<Record<C, string>>;

/** Fills `{param}` placeholders: strings as they are, lists as quoted items, anything else as JSON; unknown ones stay. */
export function renderMessage(template: string, params: Readonly<Record<string, unknown>>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => {
    if (!(key in params)) return whole;
    const v = params[key];
    return typeof v === 'string' ? v : Array.isArray(v) ? v.map((x) => JSON.stringify(x)).join(', ') : JSON.stringify(v);
  });
}

/** A factory of `ToolError`s with a stable code, from the two tables. */
export function localizedErrors<C extends string>(en: MessageTable<C>, zhCN: MessageTable<C>): (code: C, params?: Record<string, unknown>) => ToolError {
  return (code, params = {}) => new ToolError(renderMessage(en[code], params), { code, params, messageZh: renderMessage(zhCN[code], params) });
}

/** What is wrong with a pair of tables: codes missing from one, or differing placeholders. Empty when they match. */
export function messageTableProblems(en: Readonly<Record<string, string>>, zhCN: Readonly<Record<string, string>>): string[] {
  const params = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort().join(',');
  const problems: string[] = [];
  for (const code of Object.keys(en)) {
    const zh = zhCN[code];
    if (zh === undefined) problems.push(`${code}: no Chinese message`);
    else if (params(zh) !== params(en[code] as string)) problems.push(`${code}: placeholders differ`);
  }
  for (const code of Object.keys(zhCN)) if (!(code in en)) problems.push(`${code}: no English message`);
  return problems;
}
