import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

/** Route handlers read params, query and body with the types derived from their schemas, never through a cast. */

const src = join(import.meta.dirname, '../../src');

function routeFiles(dir = src): string[] {
  return readdirSync(dir).flatMap((name) => {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) return routeFiles(p);
    return name.endsWith('.routes.ts') || p.endsWith('http/server.ts') ? [p] : [];
  });
}

describe('typed routes', () => {
  it('no `req.body as`, `req.params as` or `req.query as` in route files', () => {
    const offenders = routeFiles().flatMap((f) =>
      readFileSync(f, 'utf8')
        .split('\n')
        .map((line, i) => ({ line, at: `${relative(src, f)}:${i + 1}` }))
        .filter(({ line }) => /\b(req|request)\.(body|params|query)\)? as\b|\(\s*(req|request)\.(body|params|query)\s*\?\?[^)]*\)\s*as\b/.test(line))
        .map(({ at }) => at),
    );
    expect(offenders).toEqual([]);
  });
});
