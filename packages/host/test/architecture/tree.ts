import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Every file below `dir` whose name ends with one of `exts` (default `.ts`), skipping
 * `node_modules` and `dist`; `*.test.ts` files only when `tests` is true.
 */
export function filesUnder(dir: string, opts: { exts?: readonly string[]; tests?: boolean } = {}): string[] {
  const exts = opts.exts ?? ['.ts'];
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      if (name === 'node_modules' || name === 'dist') continue;
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (exts.some((e) => name.endsWith(e)) && (opts.tests || !name.endsWith('.test.ts'))) out.push(p);
    }
  };
  walk(dir);
  return out;
}
