import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesUnder } from './tree';

/** Route handlers read params, query and body with the types derived from their schemas, never through a cast. */

const src = join(import.meta.dirname, '../../src');

const routeFiles = () => [...filesUnder(src, { exts: ['.routes.ts'] }), join(src, 'http/server.ts')];

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
