import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { filesUnder } from './tree';

/**
 * Each security seam has one implementation; a second one appearing elsewhere fails here.
 * Paths are relative to `packages/host/src`; an exception names its reason.
 */

const src = join(import.meta.dirname, '../../src');

const sources = () => filesUnder(src).map((p) => ({ rel: relative(src, p), text: readFileSync(p, 'utf8') }));

/** The text without block and whole-line comments (a comment may name what it must not do). */
const code = (text: string) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');

/** The files (outside `allowed`) whose code matches `pattern`. */
function offenders(pattern: RegExp, allowed: readonly string[]): string[] {
  return sources()
    .filter((f) => pattern.test(code(f.text)))
    .map((f) => f.rel)
    .filter((rel) => !allowed.some((a) => rel === a || (a.endsWith('/') && rel.startsWith(a))));
}

describe('one implementation per security seam', () => {
  it('path containment: only files/grant-paths.ts compares paths for "inside"', () => {
    // `relative(root, p)` tested against `..`, or `p.startsWith(root + '/')`: ad-hoc containment.
    const containment = /relative\([^)]*\)[\s\S]{0,80}['"`]\.\.|startsWith\([^)]*\}\/`\)|startsWith\([^)]*\+\s*['"]\/['"]\)|startsWith\(`\.\.\$\{sep\}`\)/;
    expect(offenders(containment, ['files/grant-paths.ts'])).toEqual([]);
  });

  it('real paths: resolved only where containment or grants are decided', () => {
    const allowed = [
      'files/grant-paths.ts',
      // a grant records the real path of an existing native path or upload
      'files/run-files.ts',
      // the working directory must exist and be a directory; its real path goes to isInside
      'tools/builtin/execute-command.ts',
    ];
    expect(offenders(/\brealpath(Sync)?\(/, allowed)).toEqual([]);
  });

  it('child processes: only process/spawn.ts starts them', () => {
    const allowed = [
      'process/spawn.ts',
      // the CLI's browser opener is detached on purpose: it must outlive the command
      'cli/open-browser.ts',
      // a synchronous probe of bubblewrap at start-up (runs `true`, 10 s timeout)
      'plugins/sandbox.ts',
    ];
    expect(offenders(/^import (?!type)[^;]*from ['"]node:child_process['"]/m, allowed)).toEqual([]);
  });

  it('outbound addresses: only net/ resolves host names and classifies addresses', () => {
    expect(offenders(/from ['"]node:dns(\/promises)?['"]|from ['"]dns['"]/, ['net/'])).toEqual([]);
    expect(offenders(/\bisIP(v4|v6)?\(/, ['net/'])).toEqual([]);
  });

  it('outbound HTTP: fetch of a user-given URL goes through net/ (safe-fetch, policy-fetch)', () => {
    const allowed = [
      'net/',
      // the CLI talks to its own host on loopback
      'cli/',
      // the operator's OTLP collector endpoint, from the host's configuration
      'tasks/task-metrics.ts',
    ];
    // a call (not a method of that name): after await, return, =, =>, ( , or :
    expect(offenders(/(?:\bawait|\breturn|=>|[=(,:])\s*fetch\(/, allowed)).toEqual([]);
  });

  it('redaction: the marker is written once, in the contract', () => {
    expect(offenders(/['"`]\[redacted\]['"`]/, [])).toEqual([]);
    expect(offenders(/function redactSecrets\b/, [])).toEqual([]);
  });
});
