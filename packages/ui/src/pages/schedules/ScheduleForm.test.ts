import { flushPromises, mount } from '@vue/test-utils';
import { describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../api/client';
import { SERVICES } from '../../app/services';
import { createUiI18n } from '../../i18n/index';
import ScheduleForm from './ScheduleForm.vue';

/** The schedule form against a recording API: field errors before any call, the host's guidance in place. */

const workflows = [{ id: 'wf1', name: 'Report', publishedVersion: 2, inputSchema: { type: 'object' } }];
const schema = { type: 'object', required: ['who'], properties: { who: { type: 'string' }, count: { type: 'integer' } } };

function setup(create: (body: unknown) => Promise<unknown>, locale: 'en' | 'zh-CN' = 'en') {
  const calls: Array<[string, string, unknown]> = [];
  const api = {
    get: async (path: string) => {
      calls.push(['GET', path, undefined]);
      return { inputSchema: schema };
    },
    post: async (path: string, body: unknown) => {
      calls.push(['POST', path, body]);
      if (path.endsWith('/preview')) return { times: [new Date(Date.now() + 86_400_000).toISOString(), new Date(Date.now() + 2 * 86_400_000).toISOString()] };
      return create(body);
    },
    del: async (path: string) => {
      calls.push(['DELETE', path, undefined]);
    },
  };
  const w = mount(ScheduleForm, {
    props: { workflows: workflows as never, browserZone: 'Europe/Berlin' },
    global: { plugins: [createUiI18n(locale)], provide: { [SERVICES as symbol]: { api } } },
    attachTo: document.body,
  });
  return { w, calls, creates: () => calls.filter(([m, p]) => m === 'POST' && p === '/api/agent/schedules') };
}

describe('schedule form', () => {
  it('defaults to daily 09:00 in the browser zone and previews before saving', async () => {
    const { w, calls } = setup(async () => ({}));
    expect((w.get('[data-testid="kind-daily"]').element as HTMLInputElement).checked).toBe(true);
    expect((w.get('[data-testid="schedule-time"]').element as HTMLInputElement).value).toBe('09:00');
    expect((w.get('[data-testid="schedule-zone"]').element as HTMLSelectElement).value).toBe('Europe/Berlin');
    await vi.waitFor(() => expect(w.findAll('[data-testid="schedule-preview"] li')).toHaveLength(2));
    expect(calls.some(([m, p, b]) => m === 'POST' && p === '/api/agent/schedules/preview' && JSON.stringify(b).includes('"kind":"daily"'))).toBe(true);
    expect(w.findAll('[data-testid="calendar-strip"] .day.fires')).toHaveLength(2);
    w.unmount();
  });

  it('names every bad field and sends nothing', async () => {
    const { w, creates } = setup(async () => ({}));
    await w.get('[data-testid="kind-weekly"]').setValue(true);
    for (const d of [1, 2, 3, 4, 5]) await w.get(`[data-testid="weekday-${d}"]`).trigger('change');
    await w.get('[data-testid="schedule-inputs"]').setValue('{"count": "two"}');
    await w.get('form').trigger('submit');
    await flushPromises();
    expect(w.get('[data-testid="error-workflowId"]').text()).toContain('published workflow');
    expect(w.get('[data-testid="error-weekdays"]').text()).toContain('weekday');
    expect(w.get('[data-testid="error-permissionMode"]').text()).toContain('permission mode');
    await w.get('[data-testid="schedule-workflow"]').setValue('wf1');
    await flushPromises();
    await w.get('form').trigger('submit');
    await flushPromises();
    const inputErrors = w.findAll('[data-testid="error-inputs"]').map((e) => e.text());
    expect(inputErrors.join(' ')).toContain('"who" is required');
    expect(inputErrors.join(' ')).toContain('"count" must be of type whole number');
    expect(creates()).toHaveLength(0);
    w.unmount();
  });

  it('sends the body and shows the host’s unattended-mode guidance beside the permission picker', async () => {
    const refusal = new ApiError(400, 'schedule_needs_unattended_mode', 'Nobody can answer an approval at the scheduled time: under the "ask" permission mode, step(s) "send" would wait.', [
      { code: 'unattended_step_gated', stepId: 'send', field: 'permissionMode', params: { stepId: 'send' } },
    ]);
    const { w, creates } = setup(async () => {
      throw refusal;
    });
    await w.get('[data-testid="schedule-workflow"]').setValue('wf1');
    await flushPromises();
    await w.get('[data-testid="schedule-mode"]').setValue('ask');
    await w.get('[data-testid="schedule-inputs"]').setValue('{"who": "ann"}');
    await w.get('form').trigger('submit');
    await flushPromises();
    expect(creates()[0]?.[2]).toEqual({ workflowId: 'wf1', inputs: { who: 'ann' }, permissionMode: 'ask', runImmediately: false, recurrence: { kind: 'daily', time: '09:00', timeZone: 'Europe/Berlin' } });
    const guidance = w.get('[data-testid="unattended-guidance"]');
    expect(guidance.text()).toContain('Nobody can answer an approval');
    expect(guidance.find('code').text()).toBe('ask');
    expect(w.emitted('saved')).toBeUndefined();
    w.unmount();
  });

  it('speaks Chinese throughout in zh-CN', async () => {
    const { w } = setup(async () => ({}), 'zh-CN');
    await w.get('form').trigger('submit');
    await flushPromises();
    const text = w.text().replace(/Report|Europe\/Berlin|UTC|[A-Z][a-z]+\/[A-Za-z_/-]+|JSON/g, '');
    expect(text.match(/[A-Za-z]{3,}/g) ?? []).toEqual([]);
    w.unmount();
  });
});
