import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../../../..');
const home = mkdtempSync(join(tmpdir(), 'fengyu-cli-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));

/**
 * What one `fengyu run` may take (it boots the host, through tsx in CI: 13–30 s at load 12–15, the
 * first of the file the slowest). A test that runs the command n times has n times this budget.
 */
const CLI_MS = 120_000;

function fengyu(args: string[], input = '') {
  return spawnSync(process.execPath, [join(root, 'bin/fengyu.mjs'), ...args], { cwd: root, env: { ...process.env, FENGYU_HOME: home, FENGYU_LOG_LEVEL: 'silent', FENGYU_SANDBOX: 'off' }, input, encoding: 'utf8', timeout: CLI_MS });
}

describe('fengyu run', () => {
  it('runs a workflow headless with --yes and exits 0 with the result', () => {
    const r = fengyu(['run', 'examples/hello-workflow.json', '--yes']);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/2\/2 steps/);
    expect(JSON.parse(r.stdout).stdout.trim()).toBe('3');
  }, CLI_MS);

  it('asks at the gate and exits 1 when the answer is no', () => {
    const r = fengyu(['run', 'examples/hello-workflow.json'], 'n\n');
    expect(r.stderr).toMatch(/Approve this plan\?/);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/cancelled/);
  }, CLI_MS);

  it('prints every validation problem and exits 2 for an invalid workflow', () => {
    const file = join(home, 'bad.json');
    writeFileSync(file, JSON.stringify({ steps: [{ id: 'a', tool: 'nope' }, { id: 'b', tool: 'execute_command', dependsOn: ['zzz'] }] }));
    const r = fengyu(['run', file, '--yes']);
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/invalid_plan/);
    expect(r.stderr).toMatch(/\[a\].*nope/);
    expect(r.stderr).toMatch(/\[b\].*zzz/);
  }, CLI_MS);

  it('passes --inputs to the run, shows skipped steps and loop progress, and refuses malformed --inputs before starting anything', () => {
    const file = join(home, 'inputs.json');
    const steps = [
      { id: 'check', kind: 'condition', cases: [{ name: 'ada', when: { all: [{ left: '{{inputs.who}}', op: 'eq', right: 'Ada' }] } }] },
      { id: 'mail_team', tool: 'task_capacity', dependsOn: ['check:else'] },
      { id: 'each', kind: 'forEach', items: ['x', 'y', 'z'], steps: [{ id: 'cap', tool: 'task_capacity' }] },
      { id: 'a', tool: 'execute_command', arguments: { command: 'echo hi {{inputs.who}}' }, dependsOn: ['check', 'each'] },
    ];
    writeFileSync(file, JSON.stringify({ goal: 'greet {{inputs.who}}', steps }));
    const r = fengyu(['run', file, '--yes', '--inputs', '{"who":"Ada"}']);
    expect(r.status, r.stderr).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.a.stdout.trim()).toBe('hi Ada');
    expect(out.mail_team).toBeNull();
    expect(r.stderr).toContain('  - check: condition → ada | else');
    expect(r.stderr).toContain('      - cap: task_capacity');
    expect(r.stderr).toMatch(/^ {2}○ mail_team skipped$/m);
    expect(r.stderr).toMatch(/^ {2}each: 3\/3$/m);
    expect(r.stderr).not.toMatch(/○ (check|each|a|cap) skipped/);
    const bad = fengyu(['run', file, '--yes', '--inputs', '{"who":']);
    expect(bad.status).toBe(2);
    expect(bad.stderr).not.toMatch(/^Run /m);
    const missing = fengyu(['run', file, '--yes']);
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/who/);
  }, 3 * CLI_MS);

  it('exits 1 when a step fails', () => {
    const file = join(home, 'fail.json');
    writeFileSync(file, JSON.stringify({ steps: [{ id: 'a', tool: 'execute_command', arguments: { command: 'echo x', cwd: '/etc' } }] }));
    const r = fengyu(['run', file, '--yes', '--mode', 'full-access']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/Run failed/);
  }, CLI_MS);
});

describe('fengyu run with piped answers', () => {
  it('reads every answer from stdin, one per gate', () => {
    const r = fengyu(['run', 'examples/hello-workflow.json'], 'y\ny\ny\n');
    expect(r.stderr).toMatch(/Approve this plan\?/);
    expect(r.stderr).toMatch(/needs approval/);
    expect(r.status, r.stderr).toBe(0);
  }, CLI_MS);
});
