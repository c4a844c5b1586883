import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';

/**
 * A tool-created schedule never gets a mode above the calling run's (issue 38): a run in
 * `approve-for-me` asks `task_schedule` for a `full-access` schedule that runs at once; the
 * workflow's `requiresApproval` step touches a mark. Real host, real schedule loop, real task
 * executor, real bash. The full-access control proves the mark would appear if the mode were kept.
 */

let t: TestHost;
let marks: string;

beforeAll(async () => {
  t = await startTestHost();
  marks = mkdtempSync(join(tmpdir(), 'fengyu-mode-cap-'));
});
afterAll(async () => {
  await t?.close();
  rmSync(marks, { recursive: true, force: true });
});

async function markingWorkflow(mark: string): Promise<string> {
  const plan = { steps: [{ id: 'touch', tool: 'execute_command', requiresApproval: true, arguments: { command: `touch ${join(marks, mark)}` } }] };
  const made = await t.api('POST', '/api/workflows', { name: `Mark ${mark}`, inputSchema: { type: 'object', properties: {} }, plan });
  expect(made.status, JSON.stringify(made.body)).toBe(200);
  const pub = await t.api('POST', `/api/workflows/${made.body.id}/publish`, { revision: made.body.revision });
  expect(pub.status, JSON.stringify(pub.body)).toBe(200);
  return made.body.id;
}

/** Runs one task_schedule step in `mode`; answers the tool's result and the immediate fire's task. */
async function scheduleFrom(mode: 'approve-for-me' | 'full-access', workflowId: string) {
  const run = await t.api('POST', '/api/agent/run', {
    workflow: { steps: [{ id: 's', tool: 'task_schedule', arguments: { workflowId, permissionMode: 'full-access', runImmediately: true, recurrence: { kind: 'once', delaySeconds: 600 } } }] },
    config: { planApproval: false, permissionMode: mode },
  });
  expect(run.status, JSON.stringify(run.body)).toBe(200);
  await t.waitFor(run.body.runId, 'complete');
  const result = (await t.api('GET', `/api/agent/runs/${run.body.runId}`)).body.result;
  const taskId = result.schedule.lastTaskId as string;
  expect(taskId).toBeTruthy();
  await t.api('DELETE', `/api/agent/schedules/${result.scheduleId}`);
  // until the run ends or stops at a gate (an unattended run's gate waits in the inbox)
  for (;;) {
    const task = (await t.api('GET', `/api/agent/tasks/${taskId}`)).body;
    if (['waiting', 'completed', 'failed', 'cancelled'].includes(task.state)) return { result, task };
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('task_schedule caps the mode at the caller’s', () => {
  it('an approve-for-me run gets an approve-for-me schedule: the requiresApproval step does not run', async () => {
    const { result, task } = await scheduleFrom('approve-for-me', await markingWorkflow('capped'));
    expect(result.schedule.permissionMode).toBe('approve-for-me');
    expect(result.permissionModeLowered).toMatchObject({ requested: 'full-access', granted: 'approve-for-me' });
    // the step waits for a person instead of running
    expect(task.state).toBe('waiting');
    const run = (await t.api('GET', `/api/agent/runs/${task.runId}`)).body;
    expect(run.gate).toMatchObject({ stepId: 'touch' });
    expect(existsSync(join(marks, 'capped'))).toBe(false);
    await t.api('POST', `/api/agent/tasks/${task.id}/kill`);
  });

  it('control: a full-access run keeps full-access, and the same step does run', async () => {
    const { result, task } = await scheduleFrom('full-access', await markingWorkflow('kept'));
    expect(result.schedule.permissionMode).toBe('full-access');
    expect(result.permissionModeLowered).toBeUndefined();
    expect(task.state).toBe('completed');
    expect(existsSync(join(marks, 'kept'))).toBe(true);
  });
});
