import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesUnder } from './tree';

/** The house rules on layering and dependencies that a machine can check. */

const root = join(import.meta.dirname, '../../../..');

const files = (dir: string, exts = ['.ts', '.vue']) => filesUnder(dir, { exts, tests: true });

const importsOf = (file: string) => [...readFileSync(file, 'utf8').matchAll(/(?:^|\n)\s*(?:import|export)[^'"\n]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)].map((m) => m[1] ?? m[2] ?? '');

describe('dependency direction', () => {
  it('protocol imports nothing of ours and does no I/O', () => {
    // re2js: the linear-time engine of schema patterns (pure JavaScript, no I/O)
    const allowed = new Set(['zod', 'ajv', 'ajv-formats', 're2js']);
    for (const f of files(join(root, 'packages/protocol/src'))) {
      for (const spec of importsOf(f)) {
        const ok = spec.startsWith('./') || spec.startsWith('../') ? !join(f, '..', spec).includes('packages/host') : allowed.has(spec) || spec === 'vitest' || spec === 'fast-check';
        expect(ok, `${relative(root, f)} imports ${spec}`).toBe(true);
      }
      if (!f.endsWith('.test.ts')) expect(readFileSync(f, 'utf8'), relative(root, f)).not.toMatch(/from ['"]node:(fs|net|http|child_process)/);
    }
  });

  it('nothing imports the host', () => {
    for (const pkg of ['packages/ui/src', 'packages/plugin-sdk/src', 'packages/plugins', 'packages/protocol/src']) {
      for (const f of files(join(root, pkg))) {
        for (const spec of importsOf(f)) expect(spec.includes('@fengyu/host') || spec.includes('packages/host'), `${relative(root, f)} imports ${spec}`).toBe(false);
      }
    }
  });

  it('only config/ reads process.env in the host', () => {
    // Any spelling: `process.env`, `process['env']`, `{ env } = process`. The CLI is no exception
    // (its settings come from loadConfig too); child processes get environments built from
    // `HostConfig.env` (process/env.ts), never from process.env. No other file is allowed.
    const reads = /\bprocess\s*(?:\?\.|\.)\s*env\b|\bprocess\s*\[\s*['"`]env['"`]\s*\]|\{[^}]*\benv\b[^}]*\}\s*=\s*(?:globalThis\.)?process\b/;
    const offenders = files(join(root, 'packages/host/src'), ['.ts'])
      .filter((f) => !f.endsWith('.test.ts') && !f.includes('/config/'))
      .filter((f) => reads.test(readFileSync(f, 'utf8')))
      .map((f) => relative(root, f));
    expect(offenders).toEqual([]);
    // the pattern catches every spelling (a check that cannot fail is no check)
    for (const spelling of ['process.env.X', 'process?.env', "process['env']", 'const { env } = process', 'const { env: e } = globalThis.process']) expect(reads.test(spelling), spelling).toBe(true);
    expect(reads.test('see `process/env.ts`')).toBe(false);
  });

  it('only http/ and routes import Fastify at runtime', () => {
    for (const f of files(join(root, 'packages/host/src'), ['.ts'])) {
      if (f.endsWith('.test.ts')) continue;
      const text = readFileSync(f, 'utf8');
      const rel = relative(root, f);
      if (/^import (?!type)[^;]*from 'fastify'/m.test(text)) expect(/\/http\/|\.routes\.ts$/.test(rel), `${rel} imports fastify`).toBe(true);
    }
  });
});
