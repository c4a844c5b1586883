import type { RunListItem, TaskSnapshot } from '@fengyu/protocol';
import { isActiveStatus } from '../pages/agent/run-follow';

/**
 * "Recent runs of this flow" stays true to the host: the list is read again while one of its
 * runs is still going (so a finished run stops showing "Running"), and whenever one of this
 * flow's background tasks changes state (a task, schedule or webhook started or ended a run).
 */

export const RECENT_SHOWN = 10;
/** How often the list is read again while one of its runs is going. */
export const RECENT_REFRESH_MS = 2000;

/** The run-list query of the flow's latest runs: the host filters by workflow (newest first). */
export function recentQuery(workflowId: string): { workflowId: string; limit: number } {
  return { workflowId, limit: RECENT_SHOWN };
}

/** True while a shown run may still change its status. */
export function anyGoing(runs: RunListItem[]): boolean {
  return runs.some((r) => isActiveStatus(r.status));
}

/** Changes whenever one of the flow's tasks appears, starts a run or ends. */
export function flowTasksKey(tasks: TaskSnapshot[], workflowId: string): string {
  return tasks
    .filter((t) => t.workflowId === workflowId)
    .map((t) => `${t.id}:${t.state}:${t.runId ?? ''}`)
    .join(',');
}
