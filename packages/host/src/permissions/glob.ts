/**
 * Glob matching for permission rules and hook matchers: `*` any run of characters (newlines
 * included), `?` exactly one; everything else literal; the whole value must match.
 *
 * Not a RegExp: `^.*a.*a.*a.*b$` backtracks exponentially in the number of stars (a rule
 * `Tool(*a*a*a*a*a*a*b)` took 39 s on a 64-character tool name, on the event loop). This is the
 * greedy two-pointer match, which retries only from the last star: O(pattern × value) at worst.
 */

export interface GlobMatcher {
  readonly glob: string;
  test(value: string): boolean;
}

export function globMatches(glob: string, value: string): boolean {
  let g = 0;
  let v = 0;
  let star = -1;
  let resume = 0;
  while (v < value.length) {
    const c = glob[g];
    if (g < glob.length && (c === '?' || (c !== '*' && c === value[v]))) {
      g++;
      v++;
    } else if (c === '*') {
      star = g++;
      resume = v;
    } else if (star >= 0) {
      g = star + 1;
      v = ++resume;
    } else {
      return false;
    }
  }
  while (glob[g] === '*') g++;
  return g === glob.length;
}

export function globMatcher(glob: string): GlobMatcher {
  return { glob, test: (value) => globMatches(glob, value) };
}
