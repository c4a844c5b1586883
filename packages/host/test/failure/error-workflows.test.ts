import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ChildHost, childApi, killChildHosts, startChildHost } from '../support/child-host';
import { startTestHost, type TestHost } from '../support/host';
import { until } from '../tasks/helpers';

/**
 * Error workflows: a failed run of a workflow that names one submits it as a background task with
 * the `failedRun` document, exactly once; a run of an error workflow triggers none; an error
 * workflow that cannot start is recorded on the failed run.
 */

let t: TestHost;
const failedRunInput = { type: 'object', required: ['failedRun'], properties: { failedRun: { type: 'object', title: 'Failed run' } } };

async function publish(name: string, plan: unknown, inputSchema: unknown = { type: 'object', properties: {} }, extra: Record<string, unknown> = {}, headers?: Record<string, string>): Promise<string> {
  const made = await t.api('POST', '/api/workflows', { name, inputSchema, plan, ...extra }, headers);
  expect(made.status, JSON.stringify(made.body)).toBe(200);
  const pub = await t.api('POST', `/api/workflows/${made.body.id}/publish`, { revision: made.body.revision }, headers);
  expect(pub.status, JSON.stringify(pub.body)).toBe(200);
  return made.body.id;
}

/** Runs a workflow's published version to its end (full access); its run id and last event. */
async function runToEnd(id: string): Promise<{ runId: string; last: string }> {
  const res = await t.api('POST', `/api/workflows/${id}/run`, { version: 'published', config: { permissionMode: 'full-access' } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const events = await t.stream(res.body.runId);
  return { runId: res.body.runId, last: events.at(-1)?.type as string };
}

/** The run detail once its error workflow settled (submitted with its run started, or failed). */
async function settled(runId: string): Promise<any> {
  return until(async () => {
    const d = (await t.api('GET', `/api/agent/runs/${runId}`)).body;
    const ew = d.errorWorkflow;
    return ew && (ew.state === 'failed' || ew.runId) ? d : undefined;
  }, `the error workflow of ${runId} to settle`);
}

const exit3 = { steps: [{ id: 'boom', tool: 'execute_command', arguments: { command: 'echo "disk on fire" >&2; exit 3' } }] };
const echoFailedRun = { steps: [{ id: 'tell', tool: 'echo', arguments: { value: '{{inputs.failedRun}}' } }] };

let notify: string;
beforeAll(async () => {
  t = await startTestHost();
  notify = await publish('notify', echoFailedRun, failedRunInput);
});
const homes: string[] = [];
afterAll(async () => {
  killChildHosts();
  await t.close();
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

describe('a failed run starts its error workflow', () => {
  it('once, as a background task with the failedRun document', async () => {
    const nightly = await publish('nightly import', exit3, undefined, { errorWorkflowId: notify });
    const { runId, last } = await runToEnd(nightly);
    expect(last).toBe('error');
    const detail = await settled(runId);
    expect(detail.status).toBe('failed');
    expect(detail.errorWorkflow).toMatchObject({ workflowId: notify, state: 'submitted' });
    const task = (await t.api('GET', `/api/agent/tasks/${detail.errorWorkflow.taskId}`)).body;
    expect(task).toMatchObject({ kind: 'workflow-error', workflowId: notify, runId: detail.errorWorkflow.runId });
    const failedRun = {
      runId,
      workflowId: nightly,
      workflowName: 'nightly import',
      version: 1,
      trigger: 'manual',
      error: { code: 'command_exit_nonzero', message: 'The command exited with status 3.\ndisk on fire' },
      failedStepId: 'boom',
    };
    const events = await t.stream(detail.errorWorkflow.runId);
    expect(events.at(-1)?.type).toBe('complete');
    expect(events.find((e) => e.type === 'step_complete')?.data.result.echoed).toEqual(failedRun);
    const errorRun = (await t.api('GET', `/api/agent/runs/${detail.errorWorkflow.runId}`)).body;
    expect(errorRun).toMatchObject({ origin: 'workflow-error', inputs: { failedRun } });
    // exactly one task of the error workflow
    const tasks = (await t.api('GET', '/api/agent/tasks?limit=200')).body.items as Array<{ workflowId: string }>;
    expect(tasks.filter((x) => x.workflowId === notify)).toHaveLength(1);
  });

  it('names how the failed run was started: a background task is `task`', async () => {
    const batch = await publish('batch import', exit3, undefined, { errorWorkflowId: notify });
    const task = (await t.api('POST', '/api/agent/tasks', { workflowId: batch, permissionMode: 'full-access' })).body;
    const done = (await t.api('GET', `/api/agent/tasks/${task.id}/output?timeoutMs=30000`)).body;
    const runId = (await t.api('GET', `/api/agent/tasks/${task.id}`)).body.runId as string;
    expect(done).toBeTruthy();
    const detail = await settled(runId);
    const events = await t.stream(detail.errorWorkflow.runId);
    expect(events.find((e) => e.type === 'step_complete')?.data.result.echoed).toMatchObject({ runId, trigger: 'task', failedStepId: 'boom', error: { code: 'command_exit_nonzero' } });
  });
});

describe('what never starts an error workflow', () => {
  it('a run of an error workflow that fails starts none (no loops)', async () => {
    // an error workflow that fails, and that names an error workflow of its own
    const broken = await publish('broken notifier', { steps: [{ id: 'oops', tool: 'execute_command', arguments: { command: 'exit 1' } }] }, failedRunInput, { errorWorkflowId: notify });
    const job = await publish('job', exit3, undefined, { errorWorkflowId: broken });
    const { runId } = await runToEnd(job);
    const detail = await settled(runId);
    const brokenRunId = detail.errorWorkflow.runId as string;
    expect((await t.stream(brokenRunId)).at(-1)?.type).toBe('error');
    const brokenRun = (await t.api('GET', `/api/agent/runs/${brokenRunId}`)).body;
    expect(brokenRun).toMatchObject({ status: 'failed', origin: 'workflow-error' });
    // its failure wrote no outbox row (it would have been written with the failure)
    expect(brokenRun.errorWorkflow).toBeUndefined();
    const db = new Database(join(t.home, 'fengyu.db'), { readonly: true });
    try {
      expect(db.prepare('select count(*) as n from error_outbox where failed_run_id = ?').get(brokenRunId)).toEqual({ n: 0 });
    } finally {
      db.close();
    }
  });

  it('a completed run starts none; a failure handled by onError neither', async () => {
    const fine = await publish('fine', { steps: [{ id: 'x', tool: 'execute_command', onError: 'continue', arguments: { command: 'exit 3' } }] }, undefined, { errorWorkflowId: notify });
    const { runId, last } = await runToEnd(fine);
    expect(last).toBe('complete');
    expect((await t.api('GET', `/api/agent/runs/${runId}`)).body.errorWorkflow).toBeUndefined();
  });

  it('an error workflow deleted before the failure: the failure is recorded on the failed run, nothing else runs', async () => {
    const doomed = await publish('doomed notifier', echoFailedRun, failedRunInput);
    const job = await publish('job with a gone notifier', exit3, undefined, { errorWorkflowId: doomed });
    expect((await t.api('DELETE', `/api/workflows/${doomed}`)).status).toBe(200);
    const { runId, last } = await runToEnd(job);
    expect(last).toBe('error');
    const detail = await settled(runId);
    expect(detail.status).toBe('failed');
    expect(detail.errorWorkflow).toMatchObject({ workflowId: doomed, state: 'failed', error: { code: expect.stringMatching(/^workflow_not_(found|published)$/) } });
    expect(detail.errorWorkflow.runId).toBeUndefined();
    expect((await t.api('GET', `/api/agent/tasks/${detail.errorWorkflow.taskId}`)).status).toBe(404);
  });

  it("another owner's workflow is never started, even when the setting names it", async () => {
    const bob = (await t.api('POST', '/api/owners', { name: 'bob' })).body.token as string;
    const bobs = await publish('bob notifier', echoFailedRun, failedRunInput, {}, { 'x-fengyu-token': bob });
    // the API refuses it as unknown …
    const refused = await t.api('POST', '/api/workflows', { name: 'x', plan: exit3, errorWorkflowId: bobs });
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('error_workflow_unknown');
    // … and a setting that names it anyway (written behind the API's back) starts nothing
    const job = await publish('job naming bob', exit3, undefined, { errorWorkflowId: notify });
    const db = new Database(join(t.home, 'fengyu.db'));
    try {
      db.prepare('update workflows set error_workflow_id = ? where id = ?').run(bobs, job);
    } finally {
      db.close();
    }
    const { runId } = await runToEnd(job);
    const detail = await settled(runId);
    expect(detail.errorWorkflow).toMatchObject({ workflowId: bobs, state: 'failed', error: { code: 'workflow_not_found' } });
    const bobTasks = (await t.api('GET', '/api/agent/tasks?limit=200', undefined, { 'x-fengyu-token': bob })).body.items;
    expect(bobTasks).toEqual([]);
    // and bob does not see alice's run's error workflow
    expect((await t.api('GET', `/api/agent/runs/${runId}`, undefined, { 'x-fengyu-token': bob })).status).toBe(404);
  });
});

/** Starts a host that must die by SIGKILL at its crash point (during its start, or later); resolves once it did. */
async function crashing(home: string, point: string, drive: (h: ChildHost) => Promise<unknown> = async () => undefined): Promise<string | null> {
  let host: ChildHost;
  try {
    host = await startChildHost(home, { FENGYU_CRASH_AT: point });
  } catch (err) {
    // it died at the point before it reported where it listens (its start drains the outbox)
    return /SIGKILL/.test(String(err)) ? 'SIGKILL' : String(err);
  }
  const exited = new Promise<string | null>((r) => host.child.once('exit', (_c, signal) => r(signal)));
  await drive(host).catch(() => undefined);
  return exited;
}

describe('exactly once across a crash', () => {
  it('a crash after the failure and its outbox row, then one after the submission: one error-workflow task', async () => {
    const home = mkdtempSync(join(tmpdir(), 'fengyu-errwf-crash-'));
    homes.push(home);
    let runId = '';
    let jobId = '';
    // dies once the failed run's outbox row is taken, before its task is submitted
    const first = await crashing(home, 'error-workflow-due', async (h) => {
      const call = (method: string, path: string, body?: unknown) => childApi(h, method, path, body);
      const made = async (name: string, plan: unknown, inputSchema: unknown, extra = {}) => {
        const w = (await call('POST', '/api/workflows', { name, plan, inputSchema, ...extra })).body;
        expect((await call('POST', `/api/workflows/${w.id}/publish`, { revision: w.revision })).status).toBe(200);
        return w.id as string;
      };
      const notifyId = await made('notify', echoFailedRun, failedRunInput);
      jobId = await made('job', exit3, { type: 'object', properties: {} }, { errorWorkflowId: notifyId });
      runId = (await call('POST', `/api/workflows/${jobId}/run`, { version: 'published', config: { permissionMode: 'full-access' } })).body.runId;
    });
    expect(first).toBe('SIGKILL');
    expect(runId).not.toBe('');
    // the restart submits it, and dies right after the submission, before the row is settled
    expect(await crashing(home, 'error-workflow-submit')).toBe('SIGKILL');
    // the next start finds the task under the row's id and submits nothing again
    const last = await startChildHost(home);
    const detail = await until(async () => {
      const d = (await childApi(last, 'GET', `/api/agent/runs/${runId}`)).body;
      return d.errorWorkflow?.state === 'submitted' ? d : undefined;
    }, 'the outbox row to be settled after the restart');
    expect(detail.status).toBe('failed');
    const tasks = (await childApi(last, 'GET', '/api/agent/tasks?limit=200')).body.items as Array<{ id: string; kind: string; state: string }>;
    const errorTasks = tasks.filter((x) => x.kind === 'workflow-error');
    expect(errorTasks.map((x) => x.id)).toEqual([detail.errorWorkflow.taskId]);
    // the host that submitted it died before the task's run was written (a task's run takes the
    // task's id): its body had not begun, so the restart queues it again and the notice runs, once
    const task = await until(async () => {
      const s = (await childApi(last, 'GET', `/api/agent/tasks/${detail.errorWorkflow.taskId}`)).body;
      return ['completed', 'interrupted', 'failed'].includes(s.state) ? s : undefined;
    }, 'the error task to end');
    expect(task).toMatchObject({ kind: 'workflow-error', state: 'completed', runId: detail.errorWorkflow.taskId });
    const runs = (await childApi(last, 'GET', '/api/agent/runs?limit=50')).body.runs as Array<{ id: string; origin: string }>;
    expect(runs.filter((r) => r.origin === 'workflow-error').map((r) => r.id)).toEqual([task.runId]);
    last.child.kill('SIGKILL');
  }, 120_000);
});
