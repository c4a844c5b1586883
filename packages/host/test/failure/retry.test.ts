import { spawn } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auto, startTestHost, type TestHost } from '../support/host';

/** Retry from the failed step: a new run reusing unchanged completed steps, in the original or the current version. */

let t: TestHost;
beforeAll(async () => {
  t = await startTestHost();
});
afterAll(async () => t.close());

type Frame = { type: string; data: any };
const ended = (events: Frame[], stepId: string) => events.find((e) => e.type === 'step_complete' && e.data.stepId === stepId)?.data;

async function failedRun(flag: string): Promise<string> {
  const res = await t.api('POST', '/api/agent/run', {
    goal: 'retry me',
    config: auto,
    inputs: { who: 'ada' },
    workflow: {
      steps: [
        { id: 'a', tool: 'echo', arguments: { value: 'first {{inputs.who}}' } },
        { id: 'b', tool: 'execute_command', arguments: { command: `test -f ${flag} || { echo not yet >&2; exit 3; }; echo ok` }, dependsOn: ['a'] },
        { id: 'c', tool: 'echo', arguments: { value: '{{node.a.result.echoed}} then {{node.b.result.stdout}}' }, dependsOn: ['b'] },
      ],
    },
  });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const events = await t.stream(res.body.runId);
  expect(events.at(-1)?.type).toBe('error');
  return res.body.runId as string;
}

describe('POST /api/agent/runs/{runId}/retry', () => {
  it('previews, then reuses the completed step, reruns the failed one and the rest at once with the old inputs', async () => {
    const flag = join(t.home, `flag-${Date.now()}`);
    const old = await failedRun(flag);
    const preview = await t.api('POST', `/api/agent/runs/${old}/retry/preview`, {});
    expect(preview.status).toBe(200);
    expect(preview.body).toEqual({ version: 'original', reused: ['a'], rerun: ['b', 'c'] });
    writeFileSync(flag, '');
    const echoes = t.tools.calls.get('echo') ?? 0;
    const res = await t.api('POST', `/api/agent/runs/${old}/retry`, { version: 'original' });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const events = await t.stream(res.body.runId);
    expect(events.at(-1)?.type).toBe('complete');
    expect(events.some((e) => e.type === 'plan_approval_requested')).toBe(false);
    expect(ended(events, 'a')).toMatchObject({ status: 'done', reused: true, result: { echoed: 'first ada' } });
    expect(ended(events, 'b')).toMatchObject({ status: 'done', result: { stdout: 'ok\n' } });
    expect(ended(events, 'b').reused).toBeUndefined();
    expect(ended(events, 'c')?.result.echoed).toBe('first ada then ok\n');
    // only c ran the echo tool again: a was reused
    expect(t.tools.calls.get('echo')).toBe(echoes + 1);
    const detail = await t.api('GET', `/api/agent/runs/${res.body.runId}`);
    expect(detail.body).toMatchObject({ parentRunId: old, inputs: { who: 'ada' }, status: 'completed' });
  });

  it('with no body retries the original version', async () => {
    const old = await failedRun(join(t.home, 'never-there'));
    const res = await t.api('POST', `/api/agent/runs/${old}/retry`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const events = await t.stream(res.body.runId);
    expect(ended(events, 'a')?.reused).toBe(true);
    expect(ended(events, 'b')?.status).toBe('failed');
  });

  it('current runs the latest published version, reusing only the steps it left unchanged', async () => {
    const flag = join(t.home, `wf-flag-${Date.now()}`);
    const steps = (bValue: string, aValue = 'one') => [
      { id: 'a', tool: 'echo', arguments: { value: aValue } },
      { id: 'b', tool: 'execute_command', arguments: { command: bValue }, dependsOn: ['a'] },
      { id: 'c', tool: 'echo', arguments: { value: 'three' }, dependsOn: ['b'] },
    ];
    const created = await t.api('POST', '/api/workflows', { name: `Retry ${Date.now()}`, inputSchema: { type: 'object', properties: {} }, plan: { steps: steps(`test -f ${flag} || exit 3`) } });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    const id = created.body.id as string;
    const pub = await t.api('POST', `/api/workflows/${id}/publish`, { revision: created.body.revision });
    expect(pub.status, JSON.stringify(pub.body)).toBe(200);
    const run = await t.api('POST', `/api/workflows/${id}/run`, { version: 'published', config: { permissionMode: 'full-access' } });
    const old = run.body.runId as string;
    expect((await t.stream(old)).at(-1)?.type).toBe('error');
    // version 2 changes a's argument and b's command: nothing of the old run is reused for it
    const saved = await t.api('PUT', `/api/workflows/${id}`, { revision: pub.body.revision, plan: { steps: steps('echo fixed', 'uno') } });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    expect((await t.api('POST', `/api/workflows/${id}/publish`, { revision: saved.body.revision })).status).toBe(200);
    expect((await t.api('POST', `/api/agent/runs/${old}/retry/preview`, { version: 'current' })).body).toEqual({ version: 'current', workflowVersion: 2, reused: [], rerun: ['a', 'b', 'c'] });
    expect((await t.api('POST', `/api/agent/runs/${old}/retry/preview`, { version: 'original' })).body).toEqual({ version: 'original', workflowVersion: 1, reused: ['a'], rerun: ['b', 'c'] });
    expect(existsSync(flag)).toBe(false);
    const res = await t.api('POST', `/api/agent/runs/${old}/retry`, { version: 'current' });
    const events = await t.stream(res.body.runId);
    expect(events.at(-1)?.type).toBe('complete');
    expect(ended(events, 'a')).toMatchObject({ status: 'done', result: { echoed: 'uno' } });
    expect(ended(events, 'a').reused).toBeUndefined();
    expect(ended(events, 'b')?.result.stdout).toBe('fixed\n');
    expect((await t.api('GET', `/api/agent/runs/${res.body.runId}`)).body).toMatchObject({ parentRunId: old, workflowId: id, workflowVersion: 2 });
  });

  it('refuses a completed run (409), a bad version (400) and current without a workflow (409), localized', async () => {
    const ok = await t.api('POST', '/api/agent/run', { config: auto, workflow: { steps: [{ id: 'a', tool: 'echo', arguments: { value: 1 } }] } });
    await t.stream(ok.body.runId);
    const done = await t.api('POST', `/api/agent/runs/${ok.body.runId}/retry`, {}, { 'accept-language': 'zh-CN' });
    expect(done.status).toBe(409);
    expect(done.body.error).toMatchObject({ code: 'run_not_retryable' });
    expect(done.body.error.message).toContain('只有失败或被中断的运行');
    expect(done.body.error.message).toContain('completed');
    const old = await failedRun(join(t.home, 'never-there'));
    const bad = await t.api('POST', `/api/agent/runs/${old}/retry`, { version: 'latest' });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ code: 'retry_version_invalid', message: 'version must be "original" or "current", not "latest".' });
    const noWorkflow = await t.api('POST', `/api/agent/runs/${old}/retry`, { version: 'current' });
    expect(noWorkflow.status).toBe(409);
    expect(noWorkflow.body.error.code).toBe('retry_no_current_version');
    // another owner's run does not exist for the caller
    const bob = (await t.api('POST', '/api/owners', { name: `bob${Date.now()}` })).body.token;
    expect((await t.api('POST', `/api/agent/runs/${old}/retry`, {}, { 'x-fengyu-token': bob })).status).toBe(404);
  });
});

describe('fengyu retry', () => {
  const cliRoot = join(import.meta.dirname, '../../../..');
  function fengyu(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve) => {
      const child = spawn(process.execPath, [join(cliRoot, 'bin/fengyu.mjs'), ...args], { cwd: cliRoot, env: { ...process.env, FENGYU_HOME: t.home, FENGYU_LOG_LEVEL: 'silent' } });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d) => (stdout += d));
      child.stderr.on('data', (d) => (stderr += d));
      child.on('close', (status) => resolve({ status, stdout, stderr }));
    });
  }

  it('retries from the failed step and prints what is reused and the new run', async () => {
    const flag = join(t.home, `cli-flag-${Date.now()}`);
    const old = await failedRun(flag);
    writeFileSync(flag, '');
    const out = await fengyu(['retry', old]);
    expect(out.status, out.stderr).toBe(0);
    const lines = out.stdout.trim().split('\n');
    expect(lines.slice(0, 2)).toEqual(['reused: a', 'run again: b, c']);
    const events = await t.stream(lines[2] as string);
    expect(events.at(-1)?.type).toBe('complete');
  });
});
