import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HALF_LIFE_DAYS, keywords, rankMemories, recencyWeight } from './memory-ranking';

const DAY = 86_400_000;
const NOW = Date.UTC(2026, 11, 2, 12, 0, 0);
const mem = (id: string, content: string, ageDays: number) => ({ id, content, createdAt: NOW - ageDays * DAY });

describe('memory ranking', () => {
  it('halves the weight every 7 days', () => {
    expect(recencyWeight(NOW, NOW)).toBe(1);
    expect(recencyWeight(NOW - 7 * DAY, NOW)).toBeCloseTo(0.5, 12);
    expect(recencyWeight(NOW - 14 * DAY, NOW)).toBeCloseTo(0.25, 12);
    expect(recencyWeight(NOW - 3.5 * DAY, NOW)).toBeCloseTo(Math.SQRT1_2, 12);
    expect(recencyWeight(NOW + 5 * DAY, NOW)).toBe(1); // future (clock skew) counts as new
    expect(HALF_LIFE_DAYS).toBe(7);
  });

  it('scores keyword overlap × recency: a fresh single match beats a two-week-old triple match', () => {
    const memories = [
      mem('old2', 'Invoices are split by Region and emailed', 14), // overlap 3 × 0.25 = 0.75
      mem('new1', 'Region column is called Area in 2026 files', 0), // overlap 1 × 1 = 1
      mem('mid3', 'Invoices split by Region weekly', 7), // overlap 3 × 0.5 = 1.5
      mem('none', 'The user prefers dark mode', 0),
    ];
    const ranked = rankMemories(memories, 'split invoices by region', NOW, 10);
    expect(ranked.map((r) => r.memory.id)).toEqual(['mid3', 'new1', 'old2']);
    expect(ranked.map((r) => r.overlap)).toEqual([3, 1, 3]);
    expect(ranked[0]?.score).toBeCloseTo(1.5, 12);
    expect(ranked[2]?.score).toBeCloseTo(0.75, 12);
  });

  it('ignores case, punctuation and stop words; splits Chinese into words', () => {
    expect([...keywords('The REGION, column!')]).toEqual(['region', 'column']);
    const zh = rankMemories([mem('z', '发票按地区拆分', 0), mem('y', '用户喜欢深色模式', 0)], '拆分发票', NOW);
    expect(zh.map((r) => r.memory.id)).toEqual(['z']);
  });

  it('returns nothing for an empty query or limit, and respects the limit', () => {
    const memories = [mem('a', 'alpha beta', 1), mem('b', 'alpha', 2), mem('c', 'alpha', 3)];
    expect(rankMemories(memories, '   ', NOW)).toEqual([]);
    expect(rankMemories(memories, 'the a', NOW)).toEqual([]);
    expect(rankMemories(memories, 'alpha', NOW, 0)).toEqual([]);
    expect(rankMemories(memories, 'alpha', NOW, 2).map((r) => r.memory.id)).toEqual(['a', 'b']);
  });

  it('property: for equal content, a newer memory never ranks below an older one', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: 0, max: 365, noNaN: true }), { minLength: 2, maxLength: 20 }), (ages) => {
        const memories = ages.map((a, i) => mem(`m${i}`, 'quarterly report totals', a));
        const ranked = rankMemories(memories, 'report totals', NOW, ages.length);
        for (let i = 1; i < ranked.length; i++) {
          expect((ranked[i - 1]?.memory.createdAt ?? 0) >= (ranked[i]?.memory.createdAt ?? 0)).toBe(true);
        }
      }),
    );
  });
});
