import type { PermissionMode, ToolEffect } from '@fengyu/protocol';
import type { RuleLines } from './rules';
import type { DecisionSource } from './types';

/**
 * The permission corpus: a call, rules and a mode → the expected decision and its source.
 * `hostile` marks cases written to get past the guard (chains, substitutions, wrappers, paths,
 * look-alikes, quoting). Used by corpus.test.ts and bench/permissions.bench.ts.
 */

export interface CorpusCase {
  /** execute_command line, or a non-command tool call. */
  command?: string;
  tool?: { name: string; effect: ToolEffect; source: string; origin?: string; arguments?: Record<string, unknown> };
  rules: RuleLines;
  mode: PermissionMode;
  expect: 'allow' | 'ask' | 'deny';
  source: DecisionSource;
  hostile: boolean;
  /** The corpus family (file) the case belongs to. */
  family: string;
}

export const RULESETS = {
  none: {},
  gitAll: { allow: ['Command(git:*)'] },
  gitStatus: { allow: ['Command(git status)'] },
  dev: {
    allow: [
      'Command(git:*)', 'Command(ls:*)', 'Command(cat:*)', 'Command(echo:*)', 'Command(grep:*)', 'Command(wc:*)',
      'Command(head:*)', 'Command(sort:*)', 'Command(npm test)', 'Command(npm run:*)', 'Command(find:*)', 'Command(pwd)',
      'Command(mkdir:*)', 'Command(cd:*)', 'Command(touch:*)', 'Command(true)', 'Command(whoami)', 'Command(id)',
      'Command(date)', 'Command(xargs:*)', 'Bash(awk:*)', 'Command(curl:*)',
    ],
  },
  blanket: { allow: ['Command'] },
  bash: { allow: ['Bash'] },
  effect: { allow: ['Effect(command)'] },
  toolAll: { allow: ['Tool(execute_command)'] },
  denyRm: { deny: ['Command(rm:*)'], allow: ['Command'] },
  denyPush: { deny: ['Command(git push:*)'], allow: ['Command(git:*)'] },
  askCurl: { ask: ['Command(curl:*)'], allow: ['Command'] },
  denyCurl: { deny: ['Bash(curl:*)'], allow: ['Command'] },
  globNpm: { allow: ['Command(npm run *)'] },
  secrets: { deny: ['Command(cat *.env)'], allow: ['Command(cat:*)'] },
  toolExcel: { allow: ['Tool(excel_*)'] },
  effRead: { ask: ['Effect(read)'] },
  effExternal: { allow: ['Effect(external)'] },
  mcpGlob: { allow: ['Mcp(github__*)'] },
  mcpShort: { allow: ['mcp__github'] },
  mcpOne: { allow: ['mcp__github__create_issue'] },
  denyEmail: { deny: ['Tool(email_*)'], allow: ['Tool(*)'] },
  askEmail: { ask: ['Tool(email_*)'], allow: ['Effect(external)'] },
  denyAfterAllow: { allow: ['Tool(excel_split)'], deny: ['Tool(excel_*)'] },
  webExample: { allow: ['WebFetch(domain:example.com)'] },
  webAll: { allow: ['WebFetch'] },
  webDenyEvil: { deny: ['WebFetch(domain:evil.com)'], allow: ['WebFetch'] },
  /** Builtins that take variable names or arithmetic, allowed as a user might. */
  builtins: {
    allow: [
      'Command(echo:*)', 'Command(printf:*)', 'Command(test:*)', 'Command([:*)', 'Command(read:*)', 'Command(let:*)',
      'Command(declare:*)', 'Command(typeset:*)', 'Command(local:*)', 'Command(export:*)', 'Command(readonly:*)',
      'Command(unset:*)', 'Command(getopts:*)', 'Command(wait:*)', 'Command(mapfile:*)', 'Command(readarray:*)',
      'Command(compgen:*)', 'Command(complete:*)', 'Command(true)', 'Command(:)', 'Command(cat:*)', 'Command(exec:*)',
    ],
  },
  echoOnly: { allow: ['Command(echo:*)'] },
  gitDenyPush: { deny: ['Command(git push:*)'], allow: ['Command'] },
  gitAllDenyPush: { deny: ['Command(git push:*)'], allow: ['Command(git:*)'] },
  denyRmExact: { deny: ['Command(rm)'], allow: ['Command'] },
  denyRmOnly: { deny: ['Command(rm:*)'] },
  lsExact: { allow: ['Command(ls)'] },
  npmTest: { allow: ['Command(npm test)'] },
  /** A user who allows the wrappers themselves: the commands they run must still be judged. */
  wrappers: {
    allow: [
      'Command(flock:*)', 'Command(strace:*)', 'Command(script:*)', 'Command(chroot:*)', 'Command(env:*)', 'Command(nice:*)',
      'Command(timeout:*)', 'Command(nohup:*)', 'Command(setsid:*)', 'Command(stdbuf:*)', 'Command(ionice:*)', 'Command(xargs:*)',
      'Command(find:*)', 'Command(awk:*)', 'Command(sed:*)', 'Command(tar:*)', 'Command(make:*)', 'Command(watch:*)',
      'Command(unshare:*)', 'Command(time:*)', 'Command(command:*)', 'Command(builtin:*)', 'Command(taskset:*)',
      'Command(ltrace:*)', 'Command(nsenter:*)', 'Command(valgrind:*)', 'Command(faketime:*)', 'Command(echo:*)',
      'Command(ls:*)', 'Command(cat:*)', 'Command(rsync:*)', 'Command(ssh:*)', 'Command(chrt:*)', 'Command(systemd-run:*)',
      'Command(fakeroot:*)', 'Command(eatmydata:*)', 'Command(proxychains4:*)', 'Command(xvfb-run:*)', 'Command(sg:*)',
    ],
  },
  webDenyAny: { deny: ['WebFetch(domain:evil.com)'], allow: ['WebFetch(domain:good.org)'] },
  webAllowGood: { allow: ['WebFetch(domain:good.org)'] },
} satisfies Record<string, RuleLines>;

export type SetName = keyof typeof RULESETS;
export type Row = [command: string, rules: SetName, expect: CorpusCase['expect'], source: DecisionSource, mode?: 'A' | 'F'];

export const MODES = { A: 'approve-for-me', F: 'full-access' } as const;

/**
 * Rows of one family. In a hostile family every row that must not be allowed is hostile; a
 * row there that expects `allow` is a near miss (looks hostile, is harmless) and counts as benign.
 */
export function rows(family: string, hostile: boolean, list: Row[]): CorpusCase[] {
  return list.map(([command, set, expect, source, mode]) => ({
    family,
    command,
    rules: RULESETS[set],
    mode: mode ? MODES[mode] : 'ask',
    expect,
    source,
    hostile: hostile && expect !== 'allow',
  }));
}

