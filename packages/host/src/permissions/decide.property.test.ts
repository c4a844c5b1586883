import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateCall } from './evaluate';
import { floorHit } from './floor';
import { parseRuleLines, type RuleLines } from './rules';
import { type BashParser, loadBashParser } from './shell-parser';

let parser: BashParser;
beforeAll(async () => {
  parser = await loadBashParser();
});

const VERBS = ['git', 'ls', 'cat', 'make', 'npm', 'grep', 'echo', 'rm', 'curl', 'sudo'];
const ARGS = ['status', 'push', 'log', '-la', 'x', 'test', 'run', '-rf', '/', 'build'];
const MODES = ['ask', 'approve-for-me', 'full-access'] as const;

/** A plain command: a verb and up to three literal arguments. */
const simple = fc.tuple(fc.constantFrom(...VERBS), fc.array(fc.constantFrom(...ARGS), { maxLength: 3 })).map(([v, a]) => [v, ...a]);
const OPS = [' && ', ' || ', '; ', ' | ', ' & ', '\n'];

/** A chain of plain commands, some placed inside substitutions, subshells or `sh -c`. */
const chain = fc
  .array(fc.tuple(simple, fc.constantFrom('plain', 'subst', 'subshell', 'shc', 'backtick')), { minLength: 1, maxLength: 5 })
  .chain((parts) => fc.tuple(fc.constant(parts), fc.array(fc.constantFrom(...OPS), { minLength: parts.length, maxLength: parts.length })))
  .map(([parts, ops]) => {
    const segments: string[][] = [];
    const text = parts
      .map(([words, how], i) => {
        const w = words.join(' ');
        segments.push(words);
        const piece =
          how === 'subst' ? ((segments.push(['echo']), `echo $(${w})`)) :
          how === 'backtick' ? ((segments.push(['echo']), `echo \`${w}\``)) :
          how === 'subshell' ? `(${w})` :
          how === 'shc' ? `sh -c '${w}'` : w;
        return i === 0 ? piece : `${ops[i]}${piece}`;
      })
      .join('');
    return { text, segments };
  });

const commandRule = fc
  .tuple(simple, fc.constantFrom('exact', 'prefix'), fc.integer({ min: 1, max: 4 }))
  .map(([words, kind, n]) => ({ words: words.slice(0, n), kind }));
const anyRule = fc.oneof(
  commandRule.map((r) => `Command(${r.words.join(' ')}${r.kind === 'prefix' ? ':*' : ''})`),
  fc.constantFrom('Command', 'Effect(command)', 'Tool(execute_command)', 'Command(git *)', 'Bash(ls:*)', 'Tool(excel_*)'),
);
const ruleLines = fc.record({ deny: fc.array(anyRule, { maxLength: 3 }), ask: fc.array(anyRule, { maxLength: 2 }), allow: fc.array(anyRule, { maxLength: 4 }) });

function decideFor(command: string, lines: RuleLines, mode: (typeof MODES)[number]) {
  const { rules } = parseRuleLines(lines);
  return evaluateCall(parser, { call: { name: 'execute_command', effect: 'command', source: 'builtin', arguments: { command } }, mode, rules });
}

describe('guard properties', () => {
  it('adding a deny rule never turns a decision into allow (or into anything but deny)', () => {
    fc.assert(
      fc.property(chain, ruleLines, anyRule, fc.constantFrom(...MODES), ({ text }, lines, extra, mode) => {
        const before = decideFor(text, lines, mode).decision;
        const after = decideFor(text, { ...lines, deny: [...(lines.deny ?? []), extra] }, mode).decision;
        expect(after === before || after === 'deny').toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it('an allow rule never covers a chain with an uncovered segment', () => {
    fc.assert(
      fc.property(chain, fc.array(commandRule, { minLength: 1, maxLength: 4 }), ({ text, segments }, allow) => {
        // every command rule is a word-boundary prefix, with or without `:*`
        const covered = (seg: string[]) => allow.some((r) => r.words.every((w, i) => seg[i] === w));
        const lines = { allow: allow.map((r) => `Command(${r.words.join(' ')}${r.kind === 'prefix' ? ':*' : ''})`) };
        const d = decideFor(text, lines, 'ask');
        if (segments.some((s) => !covered(s))) expect(d.decision).not.toBe('allow');
        if (d.decision === 'allow') expect(segments.every(covered)).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it('deny beats allow whatever the order of declaration', () => {
    fc.assert(
      fc.property(chain, commandRule, fc.constantFrom(...MODES), ({ text, segments }, r, mode) => {
        const line = `Command(${r.words.join(' ')}${r.kind === 'prefix' ? ':*' : ''})`;
        const hits = segments.some((s) => r.words.every((w, i) => s[i] === w));
        const d = decideFor(text, { allow: ['Command', line], deny: [line] }, mode);
        if (hits) expect(d.decision).toBe('deny');
      }),
      { numRuns: 300 },
    );
  });

  it('never throws on arbitrary input, and a blanket allow never allows a floor or opaque line', () => {
    const shellish = fc.string({ unit: fc.constantFrom(...'rm sudo git ls $()`\'"\\;|&<>{}[]*?~#=!\n\t -c sh eval xargs find -exec ｒ м\u200b'.split(' ')), maxLength: 40 });
    fc.assert(
      fc.property(fc.oneof(shellish, fc.string({ unit: 'grapheme', maxLength: 60 })), fc.constantFrom(...MODES), (command, mode) => {
        const d = decideFor(command, { allow: ['Command'] }, mode);
        expect(['allow', 'ask', 'deny']).toContain(d.decision);
        if (d.decision === 'allow' && d.source === 'allow') {
          expect(d.shell?.opaque).toEqual([]);
          expect(d.shell?.segments.every((s) => !s.opaque)).toBe(true);
          expect(d.shell && floorHit(d.shell)).toBeUndefined();
        }
      }),
      { numRuns: 500 },
    );
  });
});
