import { flushPromises, mount } from '@vue/test-utils';
import { createPinia, setActivePinia } from 'pinia';
import { describe, expect, it } from 'vitest';
import { createMemoryHistory } from 'vue-router';
import { SERVICES } from '../app/services';
import { createUiI18n } from '../i18n/index';
import { createUiRouter } from '../router';
import BackgroundTasks from './BackgroundTasks.vue';
import type { TaskCapacity, TaskSnapshot } from '@fengyu/protocol';

/** The capacity view: utilization, the class mix, warnings naming the aging class, live task rows. */

const capacity: TaskCapacity = {
  policy: 'owner-round-robin-weighted-priority',
  maxRunning: 16, ownerMaxRunning: 12,
  running: 16,
  maxQueued: 128,
  queued: 128,
  saturated: true,
  activeOwners: 2,
  byPriority: { interactive: { running: 8, queued: 0 }, normal: { running: 8, queued: 100 }, batch: { running: 0, queued: 28 } },
  oldestQueueWaitMs: 61_000,
  oldestInteractiveQueueWaitMs: 0,
  oldestNormalQueueWaitMs: 12_000,
  oldestBatchQueueWaitMs: 61_000,
  batchLimit: { owner: 16, global: 64, ownerCount: 0, globalCount: 0 },
  nonInteractiveLimit: { owner: 24, global: 96, ownerCount: 0, globalCount: 0 },
  ownerQueueLimit: 32,
  ownedQueued: 3,
  ownedRunning: 1,
  ownedQueueAvailable: 29,
  ownerSaturated: false,
};
const task: TaskSnapshot = { id: 'task_1', ownerId: 'local', kind: 'workflow', priority: 'batch', state: 'queued', queued: true, workflowId: 'w', workflowVersion: 1, submittedAt: '2030-01-01T00:00:00Z', queueWaitMs: 5000, output: { text: '', truncated: false } };

function mountView(locale: 'en' | 'zh-CN', props: { workflowId?: string; flowName?: string } = {}) {
  setActivePinia(createPinia());
  const api = {
    get: async (path: string) => (path.endsWith('/capacity') ? capacity : { items: [task] }),
    post: async () => ({ ...task, state: 'cancelled', queued: false }),
  };
  return mount(BackgroundTasks, { props, global: { plugins: [createUiI18n(locale), createPinia(), createUiRouter(createMemoryHistory())], provide: { [SERVICES as symbol]: { api } } } });
}

describe('capacity view', () => {
  it('warns of the full global queue and names batch, not normal, as aging', async () => {
    const w = mountView('en');
    await flushPromises();
    await flushPromises();
    const warnings = w.findAll('[data-testid="capacity-warning"]');
    expect(warnings.map((x) => x.attributes('data-kind'))).toEqual(['globalQueueFull', 'aging']);
    expect(warnings[1]?.text()).toBe('The oldest Batch task has waited 61 s.');
    expect(w.get('[data-priority="normal"]').text()).toContain('8 running · 100 queued');
    expect(w.get('[data-testid="capacity-own"]').text()).toContain('Queued 3 of 32');
    const row = w.get('[data-testid="task-row"]');
    expect(row.text()).toContain('Batch');
    expect(row.get('[data-testid="task-wait"]').text()).toMatch(/waited \d/);
    expect(row.find('[data-testid="task-kill"]').exists()).toBe(true);
    w.unmount();
  });

  it('has no English left in zh-CN', async () => {
    const w = mountView('zh-CN');
    await flushPromises();
    await flushPromises();
    expect(w.findAll('[data-testid="capacity-warning"]')[1]?.text()).toBe('最早的批量任务已等待 61 秒。');
    expect(w.text().match(/[A-Za-z]{2,}/g) ?? []).toEqual([]);
    w.unmount();
  });

  it("in a flow's Run tab lists only that flow's tasks, named by the flow", async () => {
    const mine = mountView('en', { workflowId: 'w', flowName: 'Monthly report' });
    await flushPromises();
    await flushPromises();
    expect(mine.get('h3').text()).toBe('Background tasks of this flow');
    expect(mine.get('[data-testid="task-flow"]').text()).toBe('Monthly report');
    expect(mine.get('[data-testid="task-kind"]').text()).toBe('By hand');
    mine.unmount();
    const other = mountView('zh-CN', { workflowId: 'another', flowName: '别的流程' });
    await flushPromises();
    await flushPromises();
    expect(other.findAll('[data-testid="task-row"]')).toHaveLength(0);
    expect(other.get('[data-testid="tasks-empty"]').text()).toBe('此流程还没有后台任务。可在运行对话框中使用“后台运行”。');
    other.unmount();
  });
});
