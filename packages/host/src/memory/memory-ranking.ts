/**
 * Memory retrieval, pure: score = keyword overlap × 0.5^(ageDays / 7). Keyword overlap is the
 * number of distinct query keywords found in the memory; words come from `Intl.Segmenter`, so
 * Chinese text is split into words too. `now` is passed in (tests use a fixed clock).
 */

export const HALF_LIFE_DAYS = 7;
const DAY_MS = 86_400_000;

export interface MemoryItem {
  id: string;
  content: string;
  /** Creation time, epoch milliseconds. */
  createdAt: number;
}

export interface RankedMemory<T extends MemoryItem = MemoryItem> {
  memory: T;
  score: number;
  overlap: number;
}

const STOP_WORDS = new Set(
  'a an and are as at be by do does for from has have how i in is it its me my of on or our please that the this to was we what when where which who why will with you your'.split(' '),
);

const segmenter = new Intl.Segmenter(undefined, { granularity: 'word' });

/** Distinct lower-cased keywords of a text (word-like segments minus a few English stop words). */
export function keywords(text: string): Set<string> {
  const out = new Set<string>();
  for (const seg of segmenter.segment(text.normalize('NFKC').toLowerCase())) {
    if (!seg.isWordLike) continue;
    const w = seg.segment.trim();
    if (!w || STOP_WORDS.has(w)) continue;
    out.add(w);
  }
  return out;
}

/** 0.5^(ageDays/7); a memory from the future (clock skew) counts as brand new. */
export function recencyWeight(createdAt: number, now: number): number {
  const ageDays = Math.max(0, now - createdAt) / DAY_MS;
  return 0.5 ** (ageDays / HALF_LIFE_DAYS);
}

export function scoreMemory(memory: MemoryItem, queryWords: ReadonlySet<string>, now: number): { score: number; overlap: number } {
  const words = keywords(memory.content);
  let overlap = 0;
  for (const w of queryWords) if (words.has(w)) overlap++;
  return { overlap, score: overlap * recencyWeight(memory.createdAt, now) };
}

/** Memories with any overlap, best first (ties: newer first), at most `limit`. */
export function rankMemories<T extends MemoryItem>(memories: readonly T[], query: string, now: number, limit = 5): RankedMemory<T>[] {
  const q = keywords(query);
  if (q.size === 0 || limit <= 0) return [];
  return memories
    .map((memory) => ({ memory, ...scoreMemory(memory, q, now) }))
    .filter((r) => r.overlap > 0)
    .sort((a, b) => b.score - a.score || b.memory.createdAt - a.memory.createdAt || a.memory.id.localeCompare(b.memory.id))
    .slice(0, limit);
}
