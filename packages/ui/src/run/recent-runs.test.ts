import type { RunListItem, TaskSnapshot } from '@fengyu/protocol';
import { describe, expect, it } from 'vitest';
import { anyGoing, flowTasksKey, recentOf } from './recent-runs';

const run = (id: string, workflowId: string | null, status: RunListItem['status']): RunListItem => ({
  id, goal: null, status, summary: null, error: null, origin: 'workflow', parentRunId: null, workflowId, workflowVersion: 1, stepCount: 1, createdAt: '2026-12-01T00:00:00Z', updatedAt: '2026-12-01T00:00:00Z', finishedAt: null,
});
const task = (id: string, workflowId: string, state: TaskSnapshot['state'], runId?: string): TaskSnapshot => ({
  id, ownerId: 'local', kind: 'workflow', priority: 'normal', state, queued: state === 'queued', workflowId, workflowVersion: 1, submittedAt: '2026-12-01T00:00:00Z', queueWaitMs: 0, output: { text: '', truncated: false }, ...(runId ? { runId } : {}),
});

describe('recent runs of a flow', () => {
  it("keeps only the flow's runs, newest first, at most ten", () => {
    const list = [run('a', 'w', 'running'), run('b', 'x', 'completed'), ...Array.from({ length: 12 }, (_, i) => run(`c${i}`, 'w', 'completed'))];
    const shown = recentOf(list, 'w');
    expect(shown).toHaveLength(10);
    expect(shown[0]?.id).toBe('a');
    expect(shown.every((r) => r.workflowId === 'w')).toBe(true);
  });

  it('is read again while a run is going, and not once all have ended', () => {
    expect(anyGoing([run('a', 'w', 'completed'), run('b', 'w', 'running')])).toBe(true);
    expect(anyGoing([run('a', 'w', 'awaiting_step_approval')])).toBe(true);
    expect(anyGoing([run('a', 'w', 'completed'), run('b', 'w', 'failed'), run('c', 'w', 'cancelled'), run('d', 'w', 'interrupted')])).toBe(false);
  });

  it("changes its task key when one of the flow's tasks starts a run or ends, not for another flow's", () => {
    const before = flowTasksKey([task('t1', 'w', 'queued'), task('t2', 'x', 'running')], 'w');
    expect(flowTasksKey([task('t1', 'w', 'running', 'r1'), task('t2', 'x', 'running')], 'w')).not.toBe(before);
    expect(flowTasksKey([task('t1', 'w', 'queued'), task('t2', 'x', 'completed')], 'w')).toBe(before);
  });
});
