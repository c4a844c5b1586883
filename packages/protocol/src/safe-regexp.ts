import type { RE2JS } from 're2js';
import { bundledEngine } from './re2-engine';

/**
 * The regular-expression engine of every JSON Schema check (`pattern`, `patternProperties`).
 * Schemas come from people and tools we do not trust (a workflow's input form, an MCP server's
 * tool), and V8's backtracking engine can spend minutes on `^(a+)+$`: patterns run on RE2
 * (re2js, pure JavaScript, linear time) instead. RE2 syntax is JavaScript's without
 * backreferences and lookaround; a pattern RE2 cannot compile makes its schema uncompilable,
 * which a save refuses (`input_pattern_unsafe`).
 *
 * The engine comes from `re2-engine.ts`, which this module imports: on Node (the host, the SDK,
 * tests) it is there before any check. The web UI's build replaces that module with one that has
 * no engine
 * (RE2 is ≈ 46 KB gzip its first screen need not load) and calls `loadLinearEngine()` where a
 * schema is checked. Until then a schema with a pattern is "not checked yet": nothing about it is
 * cached, so once the engine is there every check answers as on the host.
 */

type Engine = Pick<typeof RE2JS, 'compile'>;
let engine: Engine | undefined = bundledEngine;

/** Installs RE2 (the web UI, through `loadLinearEngine`). */
export function installLinearEngine(e: Engine): void {
  engine = e;
}

/** Whether patterns can be checked now (always on Node; in the web UI once loaded). */
export function linearEngineReady(): boolean {
  return engine !== undefined;
}

/** Loads RE2 on first need (a chunk of its own in the web UI); resolves at once when it is there. */
export async function loadLinearEngine(): Promise<void> {
  if (!engine) installLinearEngine((await import('re2js')).RE2JS);
}

interface Matcher {
  (pattern: string, flags: string): { test: (s: string) => boolean };
  code: string;
}

const compiled = new Map<string, RE2JS>();
const MAX_COMPILED = 512;

function compile(pattern: string): RE2JS {
  let re = compiled.get(pattern);
  if (re) return re;
  if (!engine) throw new Error('the pattern engine (RE2) is not loaded yet');
  re = engine.compile(pattern);
  if (compiled.size >= MAX_COMPILED) compiled.clear();
  compiled.set(pattern, re);
  return re;
}

/** Ajv's `code.regExp`: throws on a pattern RE2 cannot compile (Ajv then refuses the schema). */
export const linearRegExp: Matcher = Object.assign((pattern: string, _flags: string) => {
  const re = compile(pattern);
  // Ajv keys its compiled patterns by `toString()`: each pattern must answer its own
  return { test: (s: string) => re.matcher(s).find(), toString: () => `/${pattern}/` };
}, { code: 'linearRegExp' });

/**
 * Whether RE2 compiles `pattern` (a schema's `pattern` or `patternProperties` key); `true` while
 * the engine is not loaded (not known yet: the web UI checks again once it is).
 */
export function isLinearPattern(pattern: string): boolean {
  if (!engine) return true;
  try {
    compile(pattern);
    return true;
  } catch {
    return false;
  }
}

/** Every `pattern` and `patternProperties` key in a schema, nested schemas included. */
export function schemaPatterns(schema: unknown, out: string[] = [], depth = 0): string[] {
  if (depth > 64 || !schema || typeof schema !== 'object') return out;
  if (Array.isArray(schema)) {
    for (const s of schema) schemaPatterns(s, out, depth + 1);
    return out;
  }
  const o = schema as Record<string, unknown>;
  if (typeof o.pattern === 'string') out.push(o.pattern);
  if (o.patternProperties && typeof o.patternProperties === 'object') out.push(...Object.keys(o.patternProperties));
  for (const [k, v] of Object.entries(o)) if (k !== 'enum' && k !== 'const' && k !== 'default' && k !== 'examples') schemaPatterns(v, out, depth + 1);
  return out;
}
