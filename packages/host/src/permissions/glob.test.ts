import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { globMatches } from './glob';

/** The linear glob matcher agrees with the anchored RegExp it replaced (`*` → `.*`, `?` → `.`, dotAll). */
function viaRegExp(glob: string, value: string): boolean {
  const body = glob.replace(/[.+^${}()|[\]\\*?]/g, (c) => (c === '*' ? '.*' : c === '?' ? '.' : `\\${c}`));
  return new RegExp(`^${body}$`, 's').test(value);
}

describe('globMatches', () => {
  it('agrees with the RegExp semantics on random globs and values', () => {
    const alphabet = fc.constantFrom('a', 'b', '*', '?', '.', '\n', ' ', '(');
    fc.assert(
      fc.property(fc.array(alphabet, { maxLength: 8 }), fc.array(fc.constantFrom('a', 'b', '.', '\n', ' ', '(', '*'), { maxLength: 10 }), (g, v) => {
        const glob = g.join('');
        const value = v.join('');
        expect(globMatches(glob, value)).toBe(viaRegExp(glob, value));
      }),
      { numRuns: 3000 },
    );
  });

  it('answers many-star globs on long values (exponential for a backtracking RegExp)', () => {
    expect(globMatches('*a*a*a*a*a*a*a*a*a*a*b', 'a'.repeat(5000))).toBe(false);
    expect(globMatches('*a*a*a*a*a*a*a*a*a*a*b', `${'a'.repeat(5000)}b`)).toBe(true);
  });
});
