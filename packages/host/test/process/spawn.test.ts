import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { allowListedEnv } from '../../src/process/env';
import { killRunProcesses, ProcessGroups, runBounded, setprivBinary } from '../../src/process/spawn';
import { alive, readPid, waitUntil } from '../support/processes';

const base = mkdtempSync(join(tmpdir(), 'fengyu-spawn-'));
const started: ChildProcess[] = [];
afterAll(() => {
  for (const c of started) if (c.exitCode === null) c.kill('SIGKILL');
  rmSync(base, { recursive: true, force: true });
});

const env = { PATH: '/usr/local/bin:/usr/bin:/bin' };

describe('spawn helper', () => {
  it('runs a command in its own process group with capped output', async () => {
    const groups = new ProcessGroups();
    const r = await runBounded(groups, { command: 'bash', args: ['-c', 'echo $$ $(ps -o pgid= -p $$); head -c 5000 /dev/zero | tr "\\0" a >&2'], cwd: base, env }, { timeoutMs: 10_000, outputCap: 100 });
    const [pid, pgid] = r.stdout.trim().split(/\s+/).map(Number);
    expect(pid).toBe(pgid);
    expect(pid).not.toBe(process.pid);
    expect(r.stderr).toBe('a'.repeat(100));
    expect(r).toMatchObject({ exitCode: 0, truncated: true, timedOut: false, cancelled: false });
    await groups.close();
  });

  it('escalates SIGTERM to SIGKILL for a command that ignores SIGTERM', async () => {
    const groups = new ProcessGroups();
    const r = await runBounded(groups, { command: 'bash', args: ['-c', "trap '' TERM; sleep 20; echo never"] , cwd: base, env }, { timeoutMs: 200, outputCap: 1000, killGraceMs: 200 });
    expect(r).toMatchObject({ timedOut: true, signal: 'SIGKILL', stdout: '' });
    await groups.close();
  });

  it('starts commands with a parent-death signal when setpriv is available', async () => {
    expect(setprivBinary()).not.toBeNull();
    const groups = new ProcessGroups();
    const r = await runBounded(groups, { command: 'bash', args: ['-c', 'grep -E "^(Name|PPid)" /proc/$$/status; cat /proc/$$/cmdline | tr "\\0" " "'], cwd: base, env }, { timeoutMs: 10_000, outputCap: 10_000 });
    // setpriv execs the command in place: the leader is bash, a direct child of this process.
    expect(r.stdout).toMatch(/Name:\s+bash/);
    expect(r.stdout).toMatch(new RegExp(`PPid:\\s+${process.pid}\\b`));
    await groups.close();
  });

  it('killRunProcesses stops every group of that run and no other', async () => {
    const groups = new ProcessGroups();
    const dir = mkdtempSync(join(base, 'run-'));
    const start = (name: string, runId: string) =>
      groups.spawn({ command: 'bash', args: ['-c', `sleep 30 & echo $! > ${dir}/${name}.pid; wait`], cwd: dir, env, runId });
    const a1 = start('a1', 'run-a');
    const a2 = start('a2', 'run-a');
    const b = start('b', 'run-b');
    expect(await waitUntil(() => ['a1', 'a2', 'b'].every((n) => existsSync(join(dir, `${n}.pid`)) && readPid(join(dir, `${n}.pid`)) > 0))).toBe(true);
    const [pa1, pa2, pb] = ['a1', 'a2', 'b'].map((n) => readPid(join(dir, `${n}.pid`))) as [number, number, number];
    expect(await killRunProcesses('run-a', { graceMs: 500 })).toBe(2);
    expect(a1.running || a2.running).toBe(false);
    expect(await waitUntil(() => !alive(pa1) && !alive(pa2))).toBe(true);
    expect(b.running).toBe(true);
    expect(alive(pb)).toBe(true);
    expect(await killRunProcesses('run-unknown')).toBe(0);
    await groups.close(500);
    expect(b.running).toBe(false);
    expect(await waitUntil(() => !alive(pb))).toBe(true);
  });

  it('a SIGKILLed parent takes the command and its background children with it', async () => {
    const dir = mkdtempSync(join(base, 'crash-'));
    const fixture = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '../support/spawn-fixture.ts'), dir], { stdio: ['ignore', 'pipe', 'inherit'] });
    started.push(fixture);
    await new Promise<void>((resolve, reject) => {
      fixture.stdout?.on('data', (d: Buffer) => d.toString().includes('ready') && resolve());
      fixture.on('exit', (code) => reject(new Error(`fixture exited ${code}`)));
    });
    const leader = readPid(join(dir, 'leader.pid'));
    const child = readPid(join(dir, 'child.pid'));
    expect(alive(leader) && alive(child)).toBe(true);
    fixture.kill('SIGKILL');
    expect(await waitUntil(() => !alive(leader) && !alive(child))).toBe(true);
    expect(existsSync(join(dir, 'marker'))).toBe(false);
  });
});

describe('environment allow-list', () => {
  it('passes PATH, locale and time zone, never secrets', () => {
    const out = allowListedEnv({ PATH: '/bin', LANG: 'zh_CN.UTF-8', LC_ALL: 'C', TZ: 'Asia/Shanghai', OPENAI_API_KEY: 'sk-x', FENGYU_TOKEN: 't', AWS_SECRET_ACCESS_KEY: 'a', FENGYU_HOME: '/h' }, { HOME: '/data' });
    expect(out).toEqual({ PATH: '/bin', LANG: 'zh_CN.UTF-8', LC_ALL: 'C', TZ: 'Asia/Shanghai', HOME: '/data' });
  });
});
