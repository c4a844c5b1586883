/**
 * How a result value is best shown: rows of objects as a table, text that carries markdown as
 * rendered markdown, anything else structured as a collapsible tree.
 */

export type Plain = Record<string, unknown>;

export function isPlainObject(v: unknown): v is Plain {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

/** At most this many rows and columns are drawn; the rest is counted. */
export const TABLE_LIMITS = { rows: 200, columns: 24 } as const;

export interface TableShape {
  columns: string[];
  rows: Plain[];
  /** Rows and columns left out by the limits. */
  moreRows: number;
  moreColumns: number;
}

/** A non-empty array whose every item is a plain object: its columns are the keys in first-seen order. */
export function tableOf(value: unknown): TableShape | undefined {
  if (!Array.isArray(value) || value.length === 0 || !value.every(isPlainObject)) return undefined;
  const keys: string[] = [];
  const seen = new Set<string>();
  for (const row of value) for (const k of Object.keys(row)) if (!seen.has(k)) (seen.add(k), keys.push(k));
  if (keys.length === 0) return undefined;
  return {
    columns: keys.slice(0, TABLE_LIMITS.columns),
    rows: value.slice(0, TABLE_LIMITS.rows),
    moreRows: Math.max(0, value.length - TABLE_LIMITS.rows),
    moreColumns: Math.max(0, keys.length - TABLE_LIMITS.columns),
  };
}

const MARKDOWN_HINTS = [/^#{1,6}\s/m, /^\s*[-*+]\s+\S/m, /^\s*\d+[.)]\s+\S/m, /\*\*[^*\n]+\*\*/, /`[^`\n]+`/, /^```/m, /\[[^\]\n]+\]\([^)\s]+\)/, /^\s*>\s/m, /^\|.+\|\s*$/m];

/** Text worth rendering as markdown: it uses markdown syntax or runs over several lines. */
export function isMarkdownText(text: string): boolean {
  if (text.includes('\n')) return true;
  return MARKDOWN_HINTS.some((re) => re.test(text));
}

/** A short one-line rendering of any value (a table cell, a collapsed node's preview). */
export function brief(value: unknown, max = 80): string {
  const text = typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}
