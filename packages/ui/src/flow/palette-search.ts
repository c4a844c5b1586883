/**
 * Palette search: every word of the query must be found in the tool's name, label, keywords or
 * description, and results are ranked best match first — an exact or leading match of the name or
 * label outranks a word of the description. Letters scattered through a description never match
 * ("tag save" does not find web_fetch).
 */

export interface Searchable {
  label: string;
  description: string;
  group: string;
  /** The tool's name (e.g. `excel_split`), when it has one. */
  name?: string;
  keywords?: readonly string[];
}

export interface Segment {
  text: string;
  hit: boolean;
}

export const termsOf = (query: string): string[] => query.trim().toLowerCase().split(/\s+/).filter(Boolean);

/** Word starts: after a space, punctuation, `_`/`-`, or a lower→upper case change. */
function wordStarts(text: string): Set<number> {
  const starts = new Set<number>([0]);
  for (let i = 1; i < text.length; i++) {
    const prev = text[i - 1] as string;
    const ch = text[i] as string;
    if (/[\s_\-./:·,()]/.test(prev) || (/[a-z]/.test(prev) && /[A-Z]/.test(ch))) starts.add(i);
  }
  return starts;
}

/** 3 for a match at a word start, 1 inside a word (only for name and label), 0 for none. */
function fieldScore(text: string, term: string, anywhere: boolean): number {
  const lower = text.toLowerCase();
  const starts = wordStarts(text);
  let at = lower.indexOf(term);
  let inside = false;
  while (at >= 0) {
    if (starts.has(at)) return 3;
    inside = true;
    at = lower.indexOf(term, at + 1);
  }
  return inside && anywhere ? 1 : 0;
}

function termScore(item: Searchable, term: string): number {
  const name = item.name ?? '';
  const exact = name.toLowerCase() === term || item.label.toLowerCase() === term ? 40 : 0;
  const leading = name.toLowerCase().startsWith(term) || item.label.toLowerCase().startsWith(term) ? 10 : 0;
  const best = Math.max(
    fieldScore(name, term, true) * 4,
    fieldScore(item.label, term, true) * 4,
    ...(item.keywords ?? []).map((k) => fieldScore(k, term, false) * 3),
    fieldScore(item.description, term, false),
    fieldScore(item.group, term, false),
  );
  return best === 0 ? 0 : best + exact + leading;
}

/** 0 when some word of the query is not found; otherwise higher is better. An empty query matches all. */
export function searchScore(item: Searchable, query: string): number {
  const terms = termsOf(query);
  if (terms.length === 0) return 1;
  let total = 0;
  for (const term of terms) {
    const s = termScore(item, term);
    if (s === 0) return 0;
    total += s;
  }
  return total;
}

/** Splits `text` into plain and matched segments for highlighting the query's words. */
export function highlight(text: string, query: string): Segment[] {
  const terms = termsOf(query);
  if (terms.length === 0 || !text) return [{ text, hit: false }];
  const lower = text.toLowerCase();
  const marked = new Array<boolean>(text.length).fill(false);
  for (const term of terms) {
    let at = lower.indexOf(term);
    while (at >= 0) {
      for (let i = at; i < at + term.length; i++) marked[i] = true;
      at = lower.indexOf(term, at + term.length);
    }
  }
  const out: Segment[] = [];
  for (let i = 0; i < text.length; i++) {
    const hit = marked[i] as boolean;
    const last = out[out.length - 1];
    if (last && last.hit === hit) last.text += text[i];
    else out.push({ text: text[i] as string, hit });
  }
  return out;
}
