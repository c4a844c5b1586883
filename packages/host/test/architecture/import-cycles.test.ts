import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The host's import graph (type-only imports included) has no cycle, and no function in
 * `agent/` is longer than 60 lines: a newcomer reads a run from the route to the table without
 * walking in circles.
 */

const src = join(import.meta.dirname, '../../src');

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...sourceFiles(p));
    else if (name.endsWith('.ts') && !name.endsWith('.test.ts')) out.push(p);
  }
  return out;
}

const SPECIFIER = /(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g;

function resolveImport(from: string, spec: string): string | undefined {
  const base = join(dirname(from), spec);
  for (const candidate of [base, `${base}.ts`, join(base, 'index.ts')]) if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  return undefined;
}

export function importGraph(files: string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    const targets = [...text.matchAll(SPECIFIER)].map((m) => resolveImport(f, (m[1] ?? m[2]) as string)).filter((t): t is string => !!t);
    graph.set(f, [...new Set(targets)]);
  }
  return graph;
}

/** The first cycle found by a depth-first walk, as a list of files (first = last), or undefined. */
export function findCycle(graph: Map<string, string[]>): string[] | undefined {
  const state = new Map<string, 'open' | 'closed'>();
  const path: string[] = [];
  const visit = (node: string): string[] | undefined => {
    state.set(node, 'open');
    path.push(node);
    for (const next of graph.get(node) ?? []) {
      if (state.get(next) === 'open') return [...path.slice(path.indexOf(next)), next];
      if (!state.has(next)) {
        const found = visit(next);
        if (found) return found;
      }
    }
    path.pop();
    state.set(node, 'closed');
    return undefined;
  };
  for (const node of graph.keys()) {
    if (state.has(node)) continue;
    const found = visit(node);
    if (found) return found;
  }
  return undefined;
}

/** Lines of each top-level or class-member function: from its header to its closing brace. */
function longFunctions(file: string, max: number): string[] {
  const lines = readFileSync(file, 'utf8').split('\n');
  const header = /^(\s*)(?:export\s+)?(?:async\s+)?(?:function\b|(?:private\s+|public\s+|protected\s+|static\s+|readonly\s+)*(?:async\s+)?[A-Za-z_$][\w$]*\s*(?:<[^>]*>)?\s*\(.*\)\s*(?::\s*[^={]+)?\s*\{\s*$|(?:export\s+)?const\s+[A-Za-z_$][\w$]*\s*(?::[^=]+)?=\s*(?:async\s*)?\()/;
  const out: string[] = [];
  lines.forEach((line, i) => {
    const m = header.exec(line);
    if (!m || !line.trimEnd().endsWith('{') || /^\s*(if|for|while|switch|catch|return)\b/.test(line)) return;
    const indent = (m[1] ?? '').length;
    for (let j = i + 1; j < lines.length; j++) {
      const l = lines[j] as string;
      if (l.trim() === '') continue;
      const lead = l.length - l.trimStart().length;
      if (lead === indent && /^[}\]);]/.test(l.trimStart())) {
        if (j - i + 1 > max) out.push(`${relative(src, file)}:${i + 1} (${j - i + 1} lines)`);
        return;
      }
    }
  });
  return out;
}

describe('host structure', () => {
  it('has no import cycle in host/src (type imports included)', () => {
    const graph = importGraph(sourceFiles(src));
    const cycle = findCycle(graph);
    expect(cycle?.map((f) => relative(src, f)).join(' → ')).toBeUndefined();
  });

  it('has no import cycle in the contract package either', () => {
    const protocol = join(src, '../../protocol/src');
    const cycle = findCycle(importGraph(sourceFiles(protocol)));
    expect(cycle?.map((f) => relative(protocol, f)).join(' → ')).toBeUndefined();
  });

  it('the cycle finder finds a planted cycle', () => {
    const graph = new Map([
      ['a', ['b']],
      ['b', ['c']],
      ['c', ['a']],
      ['d', []],
    ]);
    expect(findCycle(graph)).toEqual(['a', 'b', 'c', 'a']);
    expect(findCycle(new Map([['a', ['b']], ['b', []]]))).toBeUndefined();
  });

  it('keeps every function in agent/ at 60 lines or fewer', () => {
    const offenders = sourceFiles(join(src, 'agent')).flatMap((f) => longFunctions(f, 60));
    expect(offenders).toEqual([]);
  });
});
