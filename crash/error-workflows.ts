import { type Api, sleep } from './host';
import type { DirectRun } from './workload';

/**
 * The error-workflow invariant (SPEC §9, docs/reliability.md), checked from the outside after the
 * restart: every failed run of the failing workflow started its error workflow exactly once — its
 * detail names one task (`errorWorkflow.taskId`, `submitted`), that task exists with kind
 * `workflow-error`, no two failed runs name the same task, and there are no other error-workflow
 * tasks. A row still `pending` is waited for first (the restart's drain submits it).
 */

/** Waits (≤ 10 s each) until no failing run's error workflow is still `pending`: then every error-workflow task exists. */
export async function awaitErrorWorkflows(api: Api, runs: DirectRun[]): Promise<void> {
  for (const run of runs) {
    if (run.kind !== 'fail' || !run.runId) continue;
    for (let i = 0; i < 100; i++) {
      const detail = (await api('GET', `/api/agent/runs/${run.runId}`)).body;
      if (detail?.errorWorkflow?.state !== 'pending') break;
      await sleep(100);
    }
  }
}

export async function checkErrorWorkflows(api: Api, runs: DirectRun[], tasks: Array<{ id: string; kind: string; workflowId?: string }>, errorId: string): Promise<string[]> {
  const out: string[] = [];
  const named = new Map<string, string>();
  for (const run of runs) {
    if (run.kind !== 'fail' || !run.runId) continue;
    const detail = (await api('GET', `/api/agent/runs/${run.runId}`)).body;
    const start = detail?.errorWorkflow;
    if (detail?.status !== 'failed') {
      if (start) out.push(`run ${run.runId} is ${detail?.status}, yet it started an error workflow (${JSON.stringify(start)})`);
      continue;
    }
    if (!start) {
      out.push(`run ${run.runId} failed, but its detail names no error workflow`);
      continue;
    }
    if (start.state !== 'submitted') out.push(`run ${run.runId} failed; its error workflow is ${start.state} ${JSON.stringify(start.error ?? {})}`);
    const other = named.get(start.taskId);
    if (other) out.push(`runs ${other} and ${run.runId} name the same error-workflow task ${start.taskId}`);
    named.set(start.taskId, run.runId);
    if (!tasks.some((t) => t.id === start.taskId && t.kind === 'workflow-error')) out.push(`run ${run.runId}: its error-workflow task ${start.taskId} is not among the tasks`);
  }
  const errorTasks = tasks.filter((t) => t.kind === 'workflow-error');
  for (const t of errorTasks) if (!named.has(t.id)) out.push(`error-workflow task ${t.id} (workflow ${t.workflowId}) belongs to no failed run`);
  if (errorTasks.some((t) => t.workflowId !== undefined && t.workflowId !== errorId)) out.push(`an error-workflow task runs another workflow than ${errorId}`);
  return out;
}
