import type { ErrorWorkflowStart, RunDetail } from '@fengyu/protocol';
import { flushPromises, mount } from '@vue/test-utils';
import { createPinia, setActivePinia } from 'pinia';
import { describe, expect, it } from 'vitest';
import { defineComponent } from 'vue';
import { createMemoryHistory, createRouter } from 'vue-router';
import { SERVICES } from '../../app/services';
import { createUiI18n } from '../../i18n/index';
import RunDetailView from './RunDetailView.vue';

/** A failed run's page says which error workflow its failure started, with a link to that run, or why none started. */

const failed = (errorWorkflow?: ErrorWorkflowStart): RunDetail =>
  ({
    id: 'run-1',
    goal: null,
    status: 'failed',
    summary: null,
    error: 'Step "boom" failed: The command exited with status 3.',
    origin: 'workflow',
    parentRunId: null,
    workflowId: 'job',
    workflowVersion: 1,
    stepCount: 1,
    createdAt: '2026-12-01T08:00:00.000Z',
    updatedAt: '2026-12-01T08:00:01.000Z',
    finishedAt: '2026-12-01T08:00:01.000Z',
    plan: { steps: [{ id: 'boom', tool: 'execute_command', arguments: { command: 'exit 3' } }] },
    config: {},
    inputs: {},
    result: null,
    gate: null,
    sandbox: null,
    executions: [],
    events: [],
    ...(errorWorkflow ? { errorWorkflow } : {}),
  }) as RunDetail;

async function view(detail: RunDetail, locale: 'en' | 'zh-CN') {
  setActivePinia(createPinia());
  // one catch-all page: where a link leads is read from the route, no page is loaded
  const router = createRouter({ history: createMemoryHistory(), routes: [{ path: '/:any(.*)*', component: defineComponent({ render: () => null }) }] });
  const api = { get: async () => detail, post: async () => ({}) };
  const workflows = { get: async (id: string) => ({ id, name: id === 'notify' ? 'Notify me' : 'Nightly import' }) };
  const w = mount(RunDetailView, { props: { runId: 'run-1' }, global: { plugins: [createUiI18n(locale), createPinia(), router], provide: { [SERVICES as symbol]: { api, workflows } } } });
  await flushPromises();
  await flushPromises();
  return { w, router };
}

describe('run page: the error workflow a failure started', () => {
  it('names it and links to its run (en and zh-CN)', async () => {
    for (const [locale, word] of [
      ['en', 'started the error workflow Notify me'],
      ['zh-CN', '启动了错误处理工作流 Notify me'],
    ] as const) {
      const { w, router } = await view(failed({ workflowId: 'notify', state: 'submitted', taskId: 'task-9', runId: 'run-2' }), locale);
      const card = w.get('[data-testid="error-workflow-start"]');
      expect(card.text(), locale).toContain(word);
      const link = card.get('[data-testid="error-workflow-run"]');
      expect(link.attributes('href')).toBe('/runs?id=run-2');
      await link.trigger('click');
      await flushPromises();
      expect(router.currentRoute.value.fullPath).toBe('/runs?id=run-2');
      w.unmount();
    }
  });

  it('says why it could not start; a submitted task without a run yet names the task', async () => {
    const refused = await view(failed({ workflowId: 'gone', state: 'failed', taskId: 'task-8', error: { code: 'workflow_not_found', message: 'Workflow gone was not found.' } }), 'en');
    const card = refused.w.get('[data-testid="error-workflow-start"]');
    expect(card.attributes('data-state')).toBe('failed');
    expect(card.text()).toContain('could not be started: Workflow gone was not found.');
    expect(card.find('[data-testid="error-workflow-run"]').exists()).toBe(false);
    refused.w.unmount();
    const queued = await view(failed({ workflowId: 'notify', state: 'submitted', taskId: 'task-7' }), 'zh-CN');
    expect(queued.w.get('[data-testid="error-workflow-start"]').text()).toContain('后台任务 task-7');
    queued.w.unmount();
  });

  it('shows nothing for a run whose failure started none', async () => {
    const { w } = await view(failed(), 'en');
    expect(w.find('[data-testid="error-workflow-start"]').exists()).toBe(false);
    w.unmount();
  });
});
