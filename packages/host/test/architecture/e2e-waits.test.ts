import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/** End-to-end tests wait for a condition (an element, a painted frame, a poll), never for a fixed time. */

const root = join(import.meta.dirname, '../../../..');

function files(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...files(p));
    else if (name.endsWith('.ts')) out.push(p);
  }
  return out;
}

describe('end-to-end tests', () => {
  it('have no fixed sleeps', () => {
    const offenders = files(join(root, 'e2e')).flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .map((line, i) => ({ line, at: `${relative(root, f)}:${i + 1}` }))
        .filter(({ line }) => /waitForTimeout\(|setTimeout\(\s*r(?:esolve)?\s*,\s*\d/.test(line))
        .map(({ at, line }) => `${at}: ${line.trim()}`),
    );
    expect(offenders).toEqual([]);
  });
});
