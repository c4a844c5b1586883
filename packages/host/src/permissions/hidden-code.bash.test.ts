import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RUNS_IN_BASH } from './corpus.hidden';
import { evaluateCall } from './evaluate';
import { parseRuleLines } from './rules';
import { type BashParser, loadBashParser } from './shell-parser';

/**
 * Each hidden-code line runs its canary in the real bash (so the corpus holds real attacks, not
 * guesses), and the guard never allows it, even when every builtin it uses is allowed.
 */

let dir: string;
let parser: BashParser;
beforeAll(async () => {
  parser = await loadBashParser();
  dir = mkdtempSync(join(tmpdir(), 'fengyu-hidden-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ALLOW = parseRuleLines({
  allow: ['Command(echo:*)', 'Command(printf:*)', 'Command(test:*)', 'Command([:*)', 'Command(read:*)', 'Command(let:*)', 'Command(declare:*)', 'Command(local:*)', 'Command(compgen:*)', 'Command(exec:*)', 'Command(set:*)', 'Command(:)', 'Command(true)'],
}).rules;

describe('hidden code, proven against bash', () => {
  it.each(RUNS_IN_BASH.map((line, i) => [line, i] as const))('%s', (line, i) => {
    const mark = join(dir, `ran-${i}`);
    const command = line.replaceAll('CANARY', `touch ${mark}`);
    try {
      execFileSync('bash', ['-c', command], { stdio: 'ignore', timeout: 10_000, env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } });
    } catch {
      // errors after the canary ran do not matter
    }
    expect(existsSync(mark), `bash did not run the hidden command of ${command}`).toBe(true);
    const d = evaluateCall(parser, { call: { name: 'execute_command', effect: 'command', source: 'builtin', arguments: { command } }, mode: 'full-access', rules: ALLOW });
    expect(d.decision, d.reason).not.toBe('allow');
  });
});
