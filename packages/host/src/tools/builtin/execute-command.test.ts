import { mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { localize } from '@fengyu/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectSandbox } from '../../plugins/sandbox';
import type { FileGrant, ToolContext } from '../tool';
import { createExecuteCommandTool, type ExecuteCommandResult } from './execute-command';

let home: string;
let granted: string;
let outside: string;

function ctx(partial: Partial<ToolContext> = {}): ToolContext {
  return { signal: new AbortController().signal, owner: 'o1', runId: 'run-1', permissionMode: 'ask', grants: [], ...partial };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitDead(pid: number): Promise<boolean> {
  for (let i = 0; i < 50; i++) {
    if (!alive(pid)) return true;
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

beforeAll(() => {
  home = mkdtempSync(join(tmpdir(), 'fengyu-exec-'));
  granted = join(home, 'granted');
  outside = join(home, 'outside');
  mkdirSync(join(granted, 'sub'), { recursive: true });
  mkdirSync(outside);
  symlinkSync(outside, join(granted, 'escape'));
});
afterAll(() => rmSync(home, { recursive: true, force: true }));

const tool = () => createExecuteCommandTool({ home, env: { PATH: process.env.PATH, FENGYU_TOKEN: 'top-secret-token', KEEP: 'yes' }, killGraceMs: 300 });
const exec = (args: Record<string, unknown>, c = ctx()) => tool().invoke(args, c) as Promise<ExecuteCommandResult>;
const rw: FileGrant = { name: 'out', path: '', kind: 'directory', access: 'read-write' };

describe('execute_command', () => {
  it('declares effect command and runs in the run scratch directory by default', async () => {
    expect(tool().effect).toBe('command');
    const r = await exec({ command: 'echo hello; pwd' });
    const scratch = realpathSync(join(home, 'runs', 'run-1', 'work'));
    expect(r).toMatchObject({ exitCode: 0, stdout: `hello\n${scratch}\n`, stderr: '', truncated: false, timedOut: false, cwd: scratch });
  });

  it('fails on a non-zero exit: command_exit_nonzero with the exit code, the tail of stderr, and the whole result', async () => {
    const err = await exec({ command: 'for i in $(seq 1 30); do echo line$i >&2; done; echo out; exit 3' }).catch((e) => e);
    expect(err).toMatchObject({ code: 'command_exit_nonzero', params: { exitCode: 3 } });
    expect(err.details.result).toMatchObject({ exitCode: 3, stdout: 'out\n', timedOut: false });
    expect(err.details.result.stderr.split('\n')).toHaveLength(31);
    // the message ends with the last 20 lines of stderr, not the first ones
    const text = localize(err.code, err.params);
    expect(text.startsWith('The command exited with status 3.\n')).toBe(true);
    expect(text.endsWith('line29\nline30')).toBe(true);
    expect(text).not.toContain('line10\n');
    expect(localize(err.code, err.params, 'zh-CN')).toContain('命令以状态码 3 退出');
    // no stderr: the tail is stdout's; no output at all: the message alone
    expect(localize('command_exit_nonzero', (await exec({ command: 'echo only-out; exit 1' }).catch((e) => e)).params)).toBe('The command exited with status 1.\nonly-out');
    expect(localize('command_exit_nonzero', (await exec({ command: 'exit 7' }).catch((e) => e)).params)).toBe('The command exited with status 7.');
    // `|| true` accepts a failure, as in any shell
    expect(await exec({ command: 'false || true' })).toMatchObject({ exitCode: 0 });
  });

  it('fails a command killed by a signal from outside with command_killed', async () => {
    const err = await exec({ command: 'echo dying >&2; kill -KILL $$' }).catch((e) => e);
    expect(err).toMatchObject({ code: 'command_killed', params: { signal: 'SIGKILL' } });
    expect(err.details.result).toMatchObject({ exitCode: null, signal: 'SIGKILL', stderr: 'dying\n' });
  });

  it('uses a writable directory grant, and a cwd inside it', async () => {
    const c = ctx({ grants: [{ ...rw, path: granted }] });
    expect((await exec({ command: 'pwd' }, c)).stdout.trim()).toBe(realpathSync(granted));
    expect((await exec({ command: 'pwd', cwd: 'sub' }, c)).stdout.trim()).toBe(realpathSync(join(granted, 'sub')));
    expect((await exec({ command: 'pwd', cwd: join(granted, 'sub') }, c)).stdout.trim()).toBe(realpathSync(join(granted, 'sub')));
  });

  it('refuses a cwd outside the grants, through .. or through a symlink; ignores read-only grants', async () => {
    const c = ctx({ grants: [{ ...rw, path: granted }, { ...rw, path: outside, access: 'read' }] });
    await expect(exec({ command: 'pwd', cwd: outside }, c)).rejects.toMatchObject({ code: 'command_cwd_not_granted' });
    await expect(exec({ command: 'pwd', cwd: '../outside' }, c)).rejects.toMatchObject({ code: 'command_cwd_not_granted' });
    await expect(exec({ command: 'pwd', cwd: 'escape' }, c)).rejects.toMatchObject({ code: 'command_cwd_not_granted' });
    await expect(exec({ command: 'pwd', cwd: '/' }, c)).rejects.toMatchObject({ code: 'command_cwd_not_granted' });
    await expect(exec({ command: 'pwd', cwd: 'missing-dir' }, c)).rejects.toMatchObject({ code: 'command_cwd_not_granted' });
  });

  it('times out with command_timeout: SIGTERM, then SIGKILL for a command that ignores it', async () => {
    const err = await exec({ command: 'sleep 20', timeoutSeconds: 1 }).catch((e) => e);
    expect(err).toMatchObject({ code: 'command_timeout', params: { seconds: 1 } });
    expect(err.details.result).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGTERM' });
    const stubborn = await exec({ command: "trap '' TERM; sleep 20; echo never", timeoutSeconds: 1 }).catch((e) => e);
    expect(stubborn).toMatchObject({ code: 'command_timeout' });
    expect(stubborn.details.result).toMatchObject({ timedOut: true, exitCode: null, signal: 'SIGKILL', stdout: '' });
  });

  it('cancels through ctx.signal and kills the whole process group', async () => {
    const pidFile = join(home, 'bg.pid');
    const ac = new AbortController();
    const p = exec({ command: `sleep 30 & echo $! > ${pidFile}; wait` }, ctx({ signal: ac.signal }));
    let pid = 0;
    for (let i = 0; i < 50 && !pid; i++) {
      await new Promise((r) => setTimeout(r, 100));
      pid = Number(readFileSync(pidFile, { encoding: 'utf8', flag: 'a+' }).trim() || 0);
    }
    expect(pid).toBeGreaterThan(0);
    expect(alive(pid)).toBe(true);
    ac.abort();
    await expect(p).rejects.toMatchObject({ code: 'tool_cancelled' });
    expect(await waitDead(pid)).toBe(true);
  });

  it('does not leave background children behind', async () => {
    const r = await exec({ command: 'sleep 30 & echo $!' });
    const pid = Number(r.stdout.trim());
    expect(pid).toBeGreaterThan(0);
    expect(await waitDead(pid)).toBe(true);
  });

  it('caps each stream and flags the truncation', async () => {
    const small = createExecuteCommandTool({ home, env: { PATH: process.env.PATH }, outputCap: 1000 });
    const r = (await small.invoke({ command: "head -c 5000 /dev/zero | tr '\\0' a; head -c 10 /dev/zero | tr '\\0' b >&2" }, ctx())) as ExecuteCommandResult;
    expect(r.stdout).toBe('a'.repeat(1000));
    expect(r.stderr).toBe('b'.repeat(10));
    expect(r.truncated).toBe(true);
  });

  it('does not pass the host token to commands', async () => {
    const r = await exec({ command: 'env' });
    expect(r.stdout).not.toContain('top-secret-token');
    expect(r.stdout).toContain('KEEP=yes');
    expect(r.stdout).toContain('FENGYU_RUN_ID=run-1');
  });

  it('rejects an empty command and an aborted signal before starting', async () => {
    await expect(exec({ command: '   ' })).rejects.toMatchObject({ code: 'invalid_request' });
    const ac = new AbortController();
    ac.abort();
    await expect(exec({ command: 'echo x' }, ctx({ signal: ac.signal }))).rejects.toMatchObject({ code: 'tool_cancelled' });
  });
});

const sandbox = detectSandbox('auto', process.env);

describe.skipIf(!sandbox.bwrapPath)('execute_command for another owner (bubblewrap)', () => {
  const isolated = () =>
    createExecuteCommandTool({
      home,
      env: { PATH: process.env.PATH, FENGYU_TOKEN: 'top-secret-token' },
      killGraceMs: 300,
      isolation: { primaryOwner: 'default', bwrap: { path: sandbox.bwrapPath as string, hardening: sandbox.hardening }, unsandboxedAllowed: async () => false },
    });

  it('keeps a read-only grant read-only and FENGYU_HOME empty, whatever the command tries', async () => {
    writeFileSync(join(home, 'token'), 'primary-token-value\n');
    const ro = join(home, 'ro-grant');
    mkdirSync(ro, { recursive: true });
    writeFileSync(join(ro, 'f.txt'), 'original');
    const script = [
      'grep -E "^CapEff" /proc/self/status',
      `mount -o remount,bind,rw ${ro} 2>/dev/null || echo remount-refused`,
      `unshare -Urm true 2>/dev/null || echo unshare-refused`,
      `echo changed > ${ro}/f.txt 2>/dev/null || echo write-refused`,
      `cat ${home}/token 2>/dev/null || echo token-hidden`,
      'env',
    ].join('; ');
    const r = (await isolated().invoke({ command: script }, ctx({ owner: 'bob', grants: [{ name: 'ro', path: realpathSync(ro), kind: 'directory', access: 'read' }] }))) as ExecuteCommandResult;
    expect(r.stdout).toMatch(/CapEff:\s+0+\n/);
    for (const word of ['remount-refused', 'unshare-refused', 'write-refused', 'token-hidden']) expect(r.stdout).toContain(word);
    expect(r.stdout).not.toContain('primary-token-value');
    expect(r.stdout).not.toContain('top-secret-token');
    expect(readFileSync(join(ro, 'f.txt'), 'utf8')).toBe('original');
  });

  it('the primary owner is not sandboxed', async () => {
    const r = (await isolated().invoke({ command: `cat ${home}/token` }, ctx({ owner: 'default' }))) as ExecuteCommandResult;
    expect(r.stdout).toBe('primary-token-value\n');
  });
});
