import { flushPromises, mount } from '@vue/test-utils';
import { describe, expect, it } from 'vitest';
import { nextTick } from 'vue';
import { SERVICES } from '../app/services';
import { createUiI18n } from '../i18n/index';
import RunDialog from './RunDialog.vue';

/** The run form's recipients: a live picker, and typed addresses beside it (validated). */

const schema = {
  type: 'object',
  required: ['recipients'],
  properties: { recipients: { type: 'string', title: 'Recipients', 'x-fengyu-enum': { tool: 'email_tags_list' } } },
};
const services = { workflows: { options: async () => [] }, files: { upload: async () => ({}) } };
const mountDialog = () => mount(RunDialog, { props: { workflowId: 'w1', schema }, global: { plugins: [createUiI18n('en')], provide: { [SERVICES as symbol]: services } } });

describe('run dialog recipients on a fresh install (no saved groups)', () => {
  it('starts with typed addresses', async () => {
    const w = mountDialog();
    await w.get('[data-testid="typed-recipients"]').setValue('ana@example.com; bo@example.org');
    await w.get('form').trigger('submit');
    const started = w.emitted('start');
    expect(started?.[0]?.[0]).toEqual({ recipients: 'ana@example.com, bo@example.org' });
  });

  it('names a bad address and does not start', async () => {
    const w = mountDialog();
    await w.get('[data-testid="typed-recipients"]').setValue('ana@example.com, bo@');
    await nextTick();
    expect(w.get('[data-testid="typed-error-recipients"]').text()).toContain('bo@');
    await w.get('form').trigger('submit');
    expect(w.emitted('start')).toBeUndefined();
  });
});

describe('run dialog background run and webhook', () => {
  const plain = { type: 'object', properties: { who: { type: 'string' }, sheet: { type: 'string', format: 'fengyu-file' } } };
  function mountWith(post: (path: string, body: unknown) => Promise<unknown>, locale: 'en' | 'zh-CN' = 'en', schema: Record<string, unknown> = plain) {
    const api = { post };
    return mount(RunDialog, { props: { workflowId: 'w1', schema }, global: { plugins: [createUiI18n(locale)], provide: { [SERVICES as symbol]: { ...services, api } } } });
  }

  it('reads a 429 on submit as "busy, retry in 1 s" with the scope, not a raw error', async () => {
    const { ApiError } = await import('../api/client');
    const w = mountWith(async () => {
      throw new ApiError(429, 'capacity_exhausted', 'Capacity exhausted (owner); retry after 1 s.', { capacityScope: 'owner', retryable: true, retryAfterSeconds: 1 });
    });
    await w.get('[data-testid="run-background"]').trigger('click');
    await flushPromises();
    await nextTick();
    expect(w.get('[data-testid="run-dialog-error"]').text()).toBe('The host is busy (your queue allowance); retry in 1 s.');
    const zh = mountWith(async () => {
      throw new ApiError(429, 'capacity_exhausted', 'x', { capacityScope: 'global-priority', capacityPriority: 'batch', retryable: true, retryAfterSeconds: 1 });
    }, 'zh-CN');
    await zh.get('[data-testid="run-background"]').trigger('click');
    await flushPromises();
    await nextTick();
    expect(zh.get('[data-testid="run-dialog-error"]').text()).toBe('宿主繁忙（此优先级的全局份额，批量预留已满）；请 1 秒后重试。');
  });

  it('says before saving that a webhook cannot bring the file a flow needs, and the background run carries the upload', async () => {
    const calls: Array<[string, unknown]> = [];
    const ref = { id: 'f1', name: 'book.xlsx', size: 3, sha256: 'x' };
    const w = mount(RunDialog, {
      props: { workflowId: 'w1', schema: { ...plain, properties: { ...plain.properties, sheet: { type: 'string', format: 'fengyu-file', title: 'Workbook' } } } },
      global: { plugins: [createUiI18n('zh-CN')], provide: { [SERVICES as symbol]: { ...services, files: { upload: async () => ref }, api: { post: async (path: string, body: unknown) => (calls.push([path, body]), {}) } } } },
    });
    expect(w.get('[data-testid="webhook-needs-files"]').text()).toContain('Workbook');
    expect(w.get('[data-testid="webhook-needs-files"]').text()).toContain('计划');
    expect((w.get('[data-testid="webhook-create"]').element as HTMLButtonElement).disabled).toBe(true);
    const input = w.get('[data-testid="file-sheet"]');
    Object.defineProperty(input.element, 'files', { value: [new File(['abc'], 'book.xlsx')] });
    await input.trigger('change');
    await flushPromises();
    await w.get('[data-testid="run-background"]').trigger('click');
    await flushPromises();
    expect(calls).toEqual([['/api/agent/tasks', { workflowId: 'w1', inputs: {}, files: [{ name: 'sheet', refs: [ref] }], permissionMode: 'ask', priority: 'normal' }]]);
  });

  it('creates a webhook from the filled values and shows the secret once with a ready curl line', async () => {
    const calls: Array<[string, unknown]> = [];
    const noFile = { type: 'object', properties: { who: { type: 'string' } } };
    const w = mountWith(
      async (path, body) => {
        calls.push([path, body]);
        return { trigger: { id: 'wh_1', workflowId: 'w1', name: 'n', defaults: {}, permissionMode: 'full-access', state: 'active', createdAt: '' }, secret: 'sekret-123' };
      },
      'en',
      noFile,
    );
    await w.get('[data-testid="input-who"]').setValue('ann');
    await w.get('[data-testid="permission-mode"]').setValue('full-access');
    await w.get('[data-testid="webhook-create"]').trigger('click');
    await flushPromises();
    await nextTick();
    expect(calls).toEqual([['/api/workflows/w1/webhooks', { defaults: { who: 'ann' }, permissionMode: 'full-access' }]]);
    expect((w.get('[data-testid="webhook-secret"]').element as HTMLInputElement).value).toBe('sekret-123');
    expect((w.get('[data-testid="webhook-url"]').element as HTMLInputElement).value).toMatch(/\/api\/workflow-hooks\/wh_1$/);
    expect(w.get('[data-testid="secret-warning"]').text()).toContain('shown only once');
    const curl = (w.get('[data-testid="webhook-curl"]').element as HTMLTextAreaElement).value;
    expect(curl).toContain("X-FengYu-Webhook-Secret: sekret-123");
    expect(curl).toContain(`-d '{"who":"ann"}'`);
  });
});
