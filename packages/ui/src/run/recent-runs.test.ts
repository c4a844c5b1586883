import type { RunListItem, TaskSnapshot } from '@fengyu/protocol';
import { flushPromises, mount } from '@vue/test-utils';
import { createPinia } from 'pinia';
import { describe, expect, it } from 'vitest';
import { SERVICES } from '../app/services';
import { createUiI18n } from '../i18n/index';
import RecentRuns from './RecentRuns.vue';
import { anyGoing, flowTasksKey } from './recent-runs';

const run = (id: string, workflowId: string | null, status: RunListItem['status']): RunListItem => ({
  id, goal: null, status, summary: null, error: null, origin: 'workflow', parentRunId: null, workflowId, workflowVersion: 1, stepCount: 1, createdAt: '2026-12-01T00:00:00Z', updatedAt: '2026-12-01T00:00:00Z', finishedAt: null,
});
const task = (id: string, workflowId: string, state: TaskSnapshot['state'], runId?: string): TaskSnapshot => ({
  id, ownerId: 'local', kind: 'workflow', priority: 'normal', state, queued: state === 'queued', workflowId, workflowVersion: 1, submittedAt: '2026-12-01T00:00:00Z', queueWaitMs: 0, output: { text: '', truncated: false }, ...(runId ? { runId } : {}),
});

describe('recent runs of a flow', () => {
  it("asks the host for the flow's runs (workflowId, ten), shows what it answers, and asks again for another flow", async () => {
    const queries: unknown[] = [];
    const agent = {
      runs: async (query: { workflowId?: string }) => {
        queries.push(query);
        return [run(`${query.workflowId}-2`, query.workflowId ?? null, 'completed'), run(`${query.workflowId}-1`, query.workflowId ?? null, 'failed')];
      },
    };
    const w = mount(RecentRuns, { props: { workflowId: 'w1' }, global: { plugins: [createPinia(), createUiI18n('en')], provide: { [SERVICES as symbol]: { agent, api: {} } } } });
    await flushPromises();
    expect(queries).toEqual([{ workflowId: 'w1', limit: 10 }]);
    expect(w.findAll('[data-testid="recent-run"]').map((b) => b.attributes('data-status'))).toEqual(['completed', 'failed']);
    await w.setProps({ workflowId: 'w2' });
    await flushPromises();
    expect(queries.at(-1)).toEqual({ workflowId: 'w2', limit: 10 });
    w.unmount();
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
