import { beforeAll, describe, expect, it } from 'vitest';
import { evaluateCall } from './evaluate';
import { GIT_EXEC_OPTIONS, GIT_FLOOR_SUBCOMMANDS } from './git';
import { parseRuleLines } from './rules';
import { type BashParser, loadBashParser } from './shell-parser';
import { WRAPPERS } from './wrappers';

/**
 * The wrapper and git exec-option tables, entry by entry: whatever a wrapper runs meets the
 * floor and the deny rules, and every git exec option is on the floor even under Command(git:*).
 */

let parser: BashParser;
beforeAll(async () => {
  parser = await loadBashParser();
});

function decide(command: string, lines: Parameters<typeof parseRuleLines>[0], mode: 'ask' | 'full-access' = 'full-access') {
  return evaluateCall(parser, { call: { name: 'execute_command', effect: 'command', source: 'builtin', arguments: { command } }, mode, rules: parseRuleLines(lines).rules });
}

/** `<wrapper> [positional…] rm x`, or through its shell option for a wrapper that takes no command words. */
function wrapped(name: string): string {
  const spec = WRAPPERS[name];
  if (!spec) throw new Error(name);
  const positional = Array.from({ length: spec.positional ?? 0 }, () => '1').join(' ');
  if (spec.commandless) return `${name} ${spec.shellOptions?.[0]} 'rm x'`;
  return `${name} ${positional} rm x`.replace(/\s+/g, ' ');
}

describe('wrapper table', () => {
  it.each(Object.keys(WRAPPERS).filter((n) => n !== 'coproc'))('%s: the floor sees the command it runs, and a deny rule names it', (name) => {
    const line = wrapped(name);
    const allowWrapper = { allow: [`Command(${name}:*)`, 'Command'] };
    expect(decide(line, allowWrapper)).toMatchObject({ decision: 'ask', source: 'floor' });
    expect(decide(line, { ...allowWrapper, deny: ['Command(rm)'] })).toMatchObject({ decision: 'deny', source: 'deny' });
  });

  it.each(Object.entries(WRAPPERS).filter(([, s]) => s.bareShell).map(([n]) => n))('%s without a command starts a shell: never allowed', (name) => {
    const positional = Array.from({ length: WRAPPERS[name]?.positional ?? 0 }, () => '1').join(' ');
    expect(decide(`${name} ${positional}`.trim(), { allow: ['Command'] }).decision).not.toBe('allow');
  });

  it.each(Object.keys(WRAPPERS).filter((n) => !['coproc', 'script', 'su', 'busybox', 'toybox'].includes(n)))('%s: a wrapped allowed command stays allowed', (name) => {
    const line = wrapped(name).replace('rm x', 'ls -la');
    const d = decide(line, { allow: ['Command(ls:*)'] }, 'ask');
    // wrappers that change user or replace the shell are on the floor themselves
    if (['sudo', 'doas', 'pkexec', 'runuser', 'exec'].includes(name)) expect(d.decision).toBe('ask');
    else expect(d, d.reason).toMatchObject({ decision: 'allow', source: 'allow' });
  });
});

describe('git exec table', () => {
  const cases: string[] = [];
  for (const [sub, spec] of Object.entries(GIT_EXEC_OPTIONS)) {
    const s = sub === '*' ? 'fetch' : sub;
    for (const o of spec.short ?? []) cases.push(`git ${s} ${o} id x`);
    for (const o of spec.long ?? []) cases.push(`git ${s} ${o}=id x`, `git ${s} ${o.slice(0, Math.max(5, o.length - 2))}=id x`);
  }
  for (const sub of Object.keys(GIT_FLOOR_SUBCOMMANDS)) cases.push(`git ${sub} x`, `git -C repo --no-pager ${sub} x`);

  it.each(cases)('%s is on the floor under Command(git:*)', (line) => {
    expect(decide(line, { allow: ['Command(git:*)'] })).toMatchObject({ decision: 'ask', source: 'floor' });
  });
});
