import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
afterAll(async () => t.close());

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
