import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesUnder } from './tree';

/**
 * Queries live in repositories: only `*.repository.ts`, `*.store.ts`, the event log and the
 * storage layer (connections, migrations, dialect plugins) build or run SQL.
 */

const src = join(import.meta.dirname, '../../src');

const sources = () => filesUnder(src);

const QUERY = /\.(selectFrom|insertInto|updateTable|deleteFrom|replaceInto|mergeInto)\(|\.transaction\(\)\.|\bsql(<[^>]*>)?`|^import (?!type)[^;]*from ['"]kysely['"]/m;

/** Named exceptions. */
const PENDING = new Set([
  // an adapter, not a query of ours: pg-boss's own SQL runs inside a Kysely transaction
  'tasks/task-engine.ts',
]);

function mayQuery(rel: string): boolean {
  return /\.(repository|store)\.ts$/.test(rel) || rel.startsWith('storage/') || rel === 'events/event-log.ts' || PENDING.has(rel);
}

describe('Kysely stays in repositories', () => {
  it('no query outside repositories, stores, the event log and storage/', () => {
    const offenders = sources()
      .map((f) => relative(src, f))
      .filter((rel) => !mayQuery(rel) && QUERY.test(readFileSync(join(src, rel), 'utf8')));
    expect(offenders).toEqual([]);
  });
});
