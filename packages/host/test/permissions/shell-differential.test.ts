import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { analyzeShell, type Segment } from '../../src/permissions/shell';
import { type BashParser, loadBashParser } from '../../src/permissions/shell-parser';

/**
 * Differential check against the real bash: random command lines built from logging stub
 * programs (c0…c5 append their name to a log) run under `bash -c`; every program bash actually
 * ran, with its arguments, must be one of the segments the analysis found, and none of these lines may be opaque.
 */

let dir: string;
let parser: BashParser;
const NAMES = ['c0', 'c1', 'c2', 'c3', 'c4', 'c5'];

beforeAll(async () => {
  parser = await loadBashParser();
  dir = mkdtempSync(join(tmpdir(), 'fengyu-shdiff-'));
  for (const n of NAMES) {
    const file = join(dir, n);
    writeFileSync(file, `#!/bin/bash\n(IFS=$'\\x1f'; printf '%s\\x1e' "${n}\${*:+$'\\x1f'}$*") >> "$LOG"\necho out-${n}\n`);
    chmodSync(file, 0o755);
  }
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const name = fc.constantFrom(...NAMES);
const simple = fc.tuple(name, fc.constantFrom('', ' a', ' "b c"', " 'd'", ' -x')).map(([n, a]) => `${n}${a}`);

const expr: fc.Arbitrary<string> = fc.letrec<{ e: string }>((tie) => ({
  e: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    simple,
    fc.tuple(tie('e'), fc.constantFrom(' && ', ' || ', '; ', ' | ', '\n'), tie('e')).map(([a, op, b]) => `${a}${op}${b}`),
    tie('e').map((e) => `( ${e} )`), // spaced: `((…))` would be arithmetic, not a subshell
    tie('e').map((e) => `{ ${e}; }`),
    tie("e").map((e) => `c0 "$( ${e})"`),
    simple.map((s) => `c1 \`${s}\``),
    fc.tuple(simple, simple).map(([a, b]) => `sh -c '${a}; ${b}'`),
    fc.tuple(simple, tie('e')).map(([a, b]) => `if ${a}; then ${b}; fi`),
    simple.map((s) => `env FOO=1 ${s}`),
    simple.map((s) => `nice -n 1 ${s}`),
    simple.map((s) => `timeout 5 ${s}`),
    name.map((n) => `echo x | xargs ${n}`),
    name.map((n) => `find ${dir} -maxdepth 0 -exec ${n} {} \\;`),
    simple.map((s) => `cat <<EOF\n$(${s})\nEOF`),
    simple.map((s) => `cat <(${s})`),
    simple.map((s) => `f() { ${s}; }; f`),
    simple.map((s) => `X=$(${s})`),
    simple.map((s) => `for i in 1; do ${s}; done`),
    fc.tuple(simple, tie('e')).map(([a, b]) => `case x in x) ${a};; *) ${b};; esac`),
    simple.map((s) => `while ! true; do :; done; until true; do :; done; ${s}`),
    // arithmetic over a substitution is opaque by design (its output is evaluated again): literal only
    simple.map((s) => `echo $((1 + 2)) "$(${s} | wc -l)"`),
    simple.map((s) => `echo \${x:-$(${s})}`),
    simple.map((s) => `c2 <<< "$(${s})"`),
    simple.map((s) => `time ${s}`),
    simple.map((s) => `! ${s}`),
    fc.tuple(simple, simple).map(([a, b]) => `${a} |& ${b}`),
    simple.map((s) => `command ${s}`),
    simple.map((s) => `builtin eval '${s}'`),
    simple.map((s) => `eval "${s.replace(/"/g, '')}"`),
    name.map((n) => `echo x | xargs sh -c '${n} "$0"'`),
    name.map((n) => `find ${dir} -maxdepth 0 -exec sh -c '${n}' \\;`),
    fc.tuple(name, name).map(([a, b]) => `sh -c "${a} \\"\\$(${b})\\""`),
    name.map((n) => `bash -o pipefail -ec '${n}'`),
    name.map((n) => `\\${n}`),
    name.map((n) => `"${n}"`),
    name.map((n) => `${n.slice(0, 1)}''${n.slice(1)}`),
    name.map((n) => `exec ${n}`),
  ),
})).e;

/** argv of every stub bash ran (name first). */
function ranBy(command: string): string[][] {
  const log = join(dir, 'log');
  writeFileSync(log, '');
  try {
    execFileSync('bash', ['-c', command], { env: { PATH: `${dir}:/usr/bin:/bin`, LOG: log }, stdio: 'ignore', timeout: 10_000 });
  } catch {
    // a failing command still ran what it ran
  }
  // Records end with \x1e (an argument may itself contain newlines: "$(… two lines …)").
  return readFileSync(log, 'utf8').split('\x1e').filter(Boolean).map((line) => line.split('\x1f'));
}

/** A segment accounts for an argv when its words are the argv (static words), or a prefix of it. */
function accounts(seg: Segment, argv: string[]): boolean {
  if (seg.words[0] !== argv[0]) return false;
  const loose = seg.trailingDynamic || seg.dynamic.some(Boolean);
  if (!loose) return seg.words.length === argv.length && seg.words.every((w, i) => w === argv[i]);
  return seg.words.every((w, i) => seg.dynamic[i] || w === argv[i]);
}

describe('segmentation versus bash', () => {
  it('finds every program bash runs, and none of these lines is opaque', () => {
    fc.assert(
      fc.property(expr, (command) => {
        const analysis = analyzeShell(parser, command);
        expect(analysis.opaque, command).toEqual([]);
        const segments = analysis.segments.filter((s) => !s.opaque);
        for (const argv of ranBy(command)) {
          expect(segments.some((s) => accounts(s, argv)), `${JSON.stringify(command)} ran ${JSON.stringify(argv)}`).toBe(true);
        }
      }),
      { numRuns: 120 },
    );
    // 120 lines, each run by a real bash with its stubs: 27.6 s at load 13 in a whole-suite run
  }, 180_000);
});
