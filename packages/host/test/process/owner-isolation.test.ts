import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectSandbox } from '../../src/plugins/sandbox';
import { startTestHost, type TestHost } from '../support/host';

/**
 * A second owner's commands cannot read the primary owner's token or anything else in
 * FENGYU_HOME, nor the host's environment: sandboxed (bubblewrap) where available, refused
 * otherwise unless the primary owner allowed unsandboxed commands.
 */

const SECRET = 'sk-host-secret-0123456789';
const bwrapHere = Boolean(detectSandbox('auto', process.env).bwrapPath);

async function runAs(t: TestHost, token: string, command: string): Promise<{ status: string; result?: { stdout: string; stderr: string; exitCode: number }; error?: string }> {
  const res = await t.api('POST', '/api/agent/run', { goal: 'probe', config: { planApproval: false, permissionMode: 'full-access' }, workflow: { steps: [{ id: 's', tool: 'execute_command', arguments: { command } }] } }, { 'x-fengyu-token': token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const runId = res.body.runId as string;
  for (;;) {
    const run = (await t.api('GET', `/api/agent/runs/${runId}`, undefined, { 'x-fengyu-token': token })).body;
    if (['completed', 'failed', 'cancelled', 'interrupted'].includes(run.status)) {
      const done = run.events.find((e: { type: string; payload?: { stepId?: string } }) => e.type === 'step_complete');
      const payload = done?.payload ?? done?.data ?? done;
      return { status: run.status, result: payload?.result, error: payload?.error };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

function probe(home: string): string {
  return [
    `cat "$FENGYU_HOME/token" 2>&1`,
    `cat ${home}/token 2>&1`,
    `ls -a ${home} 2>&1`,
    `cat ${home}/fengyu.db 2>/dev/null | head -c 200 | od -c | head -3`,
    `for p in /proc/[0-9]*; do tr '\\0' '\\n' < $p/environ 2>/dev/null; tr '\\0' ' ' < $p/cmdline 2>/dev/null; done`,
    'env',
    'echo pwd=$(pwd)',
  ].join('; ');
}

describe.skipIf(!bwrapHere)('a second owner on a host with bubblewrap', () => {
  let t: TestHost;
  let bob: string;
  let primaryToken: string;
  beforeAll(async () => {
    t = await startTestHost({ sandbox: 'auto', env: { ...process.env, FENGYU_TEST_SECRET: SECRET } });
    primaryToken = readFileSync(join(t.home, 'token'), 'utf8').trim();
    bob = (await t.api('POST', '/api/owners', { name: 'bob' })).body.token;
  });
  afterAll(() => t?.close());

  it('the primary owner reads its own token file (the probe is real)', async () => {
    const r = await runAs(t, t.host.token, `cat ${t.home}/token`);
    expect(r.status).toBe('completed');
    expect(r.result?.stdout).toContain(primaryToken);
  });

  it('cannot read the token, the database or the host environment', async () => {
    const r = await runAs(t, bob, probe(t.home));
    expect(r.status, r.error).toBe('completed');
    const seen = `${r.result?.stdout}\n${r.result?.stderr}`;
    expect(seen).not.toContain(primaryToken);
    expect(seen).not.toContain(SECRET);
    expect(seen).not.toContain('SQLite format');
    expect(seen).toMatch(/No such file/);
    expect(seen).toMatch(/pwd=.*\/runs\/.*\/work/);
  });

  it("runs the owner's own command hooks in the same sandbox", async () => {
    const hook = { name: 'peek', event: 'pre_tool_use', matcher: 'execute_command', type: 'command', command: `cat ${t.home}/token > hook-token.txt 2>&1; echo ran > hook-ran.txt; touch ${t.home}/hook-was-here`, timeoutSeconds: 10 };
    expect((await t.api('PATCH', '/api/settings', { hooks: [hook] }, { 'x-fengyu-token': bob })).status).toBe(200);
    const res = await t.api('POST', '/api/agent/run', { goal: 'h', config: { planApproval: false, permissionMode: 'full-access' }, workflow: { steps: [{ id: 's', tool: 'execute_command', arguments: { command: 'echo step' } }] } }, { 'x-fengyu-token': bob });
    const runId = res.body.runId as string;
    for (;;) {
      const run = (await t.api('GET', `/api/agent/runs/${runId}`, undefined, { 'x-fengyu-token': bob })).body;
      if (run.status === 'completed') break;
      expect(['failed', 'cancelled', 'interrupted']).not.toContain(run.status);
      await new Promise((done) => setTimeout(done, 50));
    }
    const scratch = join(t.home, 'runs', runId, 'work');
    expect(readFileSync(join(scratch, 'hook-ran.txt'), 'utf8')).toBe('ran\n');
    expect(readFileSync(join(scratch, 'hook-token.txt'), 'utf8')).not.toContain(primaryToken);
    expect(() => readFileSync(join(t.home, 'hook-was-here'))).toThrow();
    await t.api('PATCH', '/api/settings', { hooks: [] }, { 'x-fengyu-token': bob });
  });

  it('cannot write outside its scratch directory', async () => {
    const r = await runAs(t, bob, `touch ${t.home}/bob-was-here 2>&1; echo x > /usr/bob 2>&1; echo ok > out.txt && cat out.txt`);
    expect(r.status, r.error).toBe('completed');
    expect(r.result?.stdout).toMatch(/ok$/m);
    expect(() => readFileSync(join(t.home, 'bob-was-here'))).toThrow();
    expect(() => readFileSync('/usr/bob')).toThrow();
  });
});

describe('a second owner on a host without a sandbox', () => {
  let t: TestHost;
  let bob: string;
  beforeAll(async () => {
    t = await startTestHost({ sandbox: 'off' });
    bob = (await t.api('POST', '/api/owners', { name: 'bob' })).body.token;
  });
  afterAll(() => t?.close());

  it('is refused commands with a clear error until the primary owner allows them', async () => {
    const refused = await runAs(t, bob, `cat ${t.home}/token`);
    expect(refused.status).toBe('failed');
    expect(refused.error).toMatch(/bubblewrap/);
    expect(refused.error).toMatch(/commands\.allowUnsandboxedOwners/);
    expect(refused.error).not.toContain(t.host.token);

    const byBob = await t.api('PATCH', '/api/settings', { commands: { allowUnsandboxedOwners: true } }, { 'x-fengyu-token': bob });
    expect(byBob.status).toBe(403);
    expect((await runAs(t, bob, 'echo hi')).status).toBe('failed');

    const zh = await t.api('PATCH', '/api/settings', { commands: { allowUnsandboxedOwners: 'yes' } }, { 'accept-language': 'zh-CN' });
    expect(zh.status).toBe(400);

    const allowed = await t.api('PATCH', '/api/settings', { commands: { allowUnsandboxedOwners: true } });
    expect(allowed.status, JSON.stringify(allowed.body)).toBe(200);
    const ok = await runAs(t, bob, 'echo hi; env');
    expect(ok.status, ok.error).toBe('completed');
    expect(ok.result?.stdout).toMatch(/^hi$/m);
    expect(ok.result?.stdout).not.toContain('FENGYU_TOKEN');
  });

  it("does not run the owner's own command hooks unsandboxed either", async () => {
    const hook = { name: 'peek', event: 'pre_tool_use', matcher: 'execute_command', type: 'command', command: `cp ${t.home}/token ${t.home}/stolen`, timeoutSeconds: 10 };
    const carol = (await t.api('POST', '/api/owners', { name: 'carol' })).body.token as string;
    expect((await t.api('PATCH', '/api/settings', { hooks: [hook] }, { 'x-fengyu-token': carol })).status).toBe(200);
    await t.api('PATCH', '/api/settings', { commands: { allowUnsandboxedOwners: false } });
    const r = await runAs(t, carol, 'echo x');
    expect(r.status).toBe('failed');
    expect(() => readFileSync(join(t.home, 'stolen'))).toThrow();
  });

  it('the primary owner runs commands unsandboxed as before', async () => {
    const r = await runAs(t, t.host.token, 'echo mine');
    expect(r).toMatchObject({ status: 'completed', result: { stdout: 'mine\n' } });
  });
});
