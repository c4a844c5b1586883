import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Comments state the rule itself: none cites a document that lives outside the repository (the
 * product brief, the external contract or the stack notes), which a reader of the code cannot open.
 */

const root = join(import.meta.dirname, '../../../..');
const CITATION = /\bSPEC\b|\bSTACK\.md\b|\bARCHITECTURE\.md\b|\bSTYLE\.md\b|\bseed 00\d\b/;

function sources(dir: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      if (name === 'node_modules' || name === 'dist' || name === 'screenshots') continue;
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (/\.(ts|vue|mjs|js)$/.test(name) && p !== import.meta.filename) out.push(p);
    }
  };
  walk(dir);
  return out;
}

describe('comments', () => {
  it('cite no document outside the repository', () => {
    const offenders: string[] = [];
    for (const dir of ['packages', 'bench', 'e2e']) {
      for (const f of sources(join(root, dir))) {
        readFileSync(f, 'utf8')
          .split('\n')
          .forEach((line, i) => {
            if (CITATION.test(line)) offenders.push(`${relative(root, f)}:${i + 1}: ${line.trim()}`);
          });
      }
    }
    expect(offenders).toEqual([]);
  });

  it('the docs state rules, not the external contract\'s sections (benchmarks-history.md, a dated record, aside)', () => {
    const offenders: string[] = [];
    const docs = (d: string): string[] => readdirSync(d).flatMap((name) => (statSync(join(d, name)).isDirectory() ? docs(join(d, name)) : name.endsWith('.md') ? [join(d, name)] : []));
    for (const f of [join(root, 'README.md'), ...docs(join(root, 'docs'))]) {
      if (f.endsWith('benchmarks-history.md')) continue;
      readFileSync(f, 'utf8')
        .split('\n')
        .forEach((line, i) => {
          if (CITATION.test(line)) offenders.push(`${relative(root, f)}:${i + 1}: ${line.trim()}`);
        });
    }
    expect(offenders).toEqual([]);
  });
});
