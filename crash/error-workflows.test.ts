import { describe, expect, it } from 'vitest';
import { checkErrorWorkflows } from './error-workflows';
import type { Api } from './host';
import type { DirectRun } from './workload';

// The campaign's error-workflow checker must fail on each broken promise (a checker that cannot fail proves nothing).
// Its API is a table of run details here: the checker's logic is under test, not the host's.

const run = (id: string): DirectRun => ({ tag: id, kind: 'fail', steps: ['s1'], runId: id, frames: [], answers: [] });
const detailsApi =
  (details: Record<string, unknown>): Api =>
  async (_method, path) => ({ status: 200, body: details[path.split('/').pop() as string] });
const submitted = (taskId: string) => ({ status: 'failed', errorWorkflow: { workflowId: 'ew', state: 'submitted', taskId } });
const task = (id: string) => ({ id, kind: 'workflow-error', workflowId: 'ew' });

describe('crash campaign: one error-workflow task per failed run', () => {
  it('holds for two failed runs each naming its own task, and a run that did not fail naming none', async () => {
    const api = detailsApi({ r1: submitted('t1'), r2: submitted('t2'), r3: { status: 'interrupted' } });
    expect(await checkErrorWorkflows(api, [run('r1'), run('r2'), run('r3')], [task('t1'), task('t2'), { id: 't9', kind: 'workflow', workflowId: 'x' }], 'ew')).toEqual([]);
  });

  it('flags a failed run without its error workflow, or one that could not start', async () => {
    expect((await checkErrorWorkflows(detailsApi({ r1: { status: 'failed' } }), [run('r1')], [], 'ew')).join('\n')).toMatch(/names no error workflow/);
    const failed = { status: 'failed', errorWorkflow: { workflowId: 'ew', state: 'failed', taskId: 't1', error: { code: 'x', message: 'y' } } };
    expect((await checkErrorWorkflows(detailsApi({ r1: failed }), [run('r1')], [task('t1')], 'ew')).join('\n')).toMatch(/its error workflow is failed/);
  });

  it('flags a second error-workflow task, a task named twice, a named task that does not exist, and one for a run that did not fail', async () => {
    const api = detailsApi({ r1: submitted('t1'), r2: submitted('t1'), r3: submitted('t3') });
    const found = (await checkErrorWorkflows(api, [run('r1'), run('r2')], [task('t1'), task('t2')], 'ew')).join('\n');
    expect(found).toMatch(/name the same error-workflow task t1/);
    expect(found).toMatch(/task t2 .* belongs to no failed run/);
    expect((await checkErrorWorkflows(api, [run('r3')], [], 'ew')).join('\n')).toMatch(/task t3 is not among the tasks/);
    const live = detailsApi({ r1: { status: 'completed', errorWorkflow: { workflowId: 'ew', state: 'submitted', taskId: 't1' } } });
    expect((await checkErrorWorkflows(live, [run('r1')], [task('t1')], 'ew')).join('\n')).toMatch(/is completed, yet it started an error workflow/);
  });
});
