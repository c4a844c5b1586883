import type { ScheduleView } from '@fengyu/protocol';
import { flushPromises, mount } from '@vue/test-utils';
import { createPinia } from 'pinia';
import { describe, expect, it } from 'vitest';
import { SERVICES } from '../../app/services';
import { exactTime } from '../../app/time';
import { createUiI18n } from '../../i18n/index';
import SchedulesPage from './SchedulesPage.vue';

/** The schedules page tells the fires that fell while the host was not running (the host's `firesWhileDown`). */

const schedule = (extra: Partial<ScheduleView>): ScheduleView => ({
  id: 'sch_1',
  workflowId: 'wf1',
  recurrence: { kind: 'daily', time: '09:00', timeZone: 'UTC' },
  permissionMode: 'full-access',
  inputs: {},
  createdAt: '2026-12-01T08:00:00.000Z',
  nextRunAt: '2026-12-03T09:00:00.000Z',
  triggerCount: 1,
  missedFires: 0,
  state: 'active',
  ...extra,
});

async function page(items: ScheduleView[], locale: 'en' | 'zh-CN') {
  const api = {
    get: async (path: string) => (path === '/api/agent/schedules' ? { items } : path === '/api/workflows' ? { workflows: [{ id: 'wf1', name: 'Daily report', publishedVersion: 1 }] } : { items: [] }),
  };
  const w = mount(SchedulesPage, { global: { plugins: [createUiI18n(locale), createPinia()], provide: { [SERVICES as symbol]: { api, workflows: { list: async () => [{ id: 'wf1', name: 'Daily report', publishedVersion: 1 }] } } }, stubs: { RouterLink: true } } });
  await flushPromises();
  return w;
}

describe('schedules page: fires while the host was down', () => {
  const down = [{ at: '2026-12-02T09:00:00.000Z', downFrom: '2026-12-02T08:55:00.000Z', downUntil: '2026-12-02T10:02:00.000Z' }];

  it('says the host was not running at the fire, with the downtime, and how to keep it running (en and zh-CN)', async () => {
    for (const [locale, words] of [
      ['en', ['The host was not running at', 'did not run on time', 'fengyu service install']],
      ['zh-CN', ['宿主在', '未运行', '没有按时运行', 'fengyu service install']],
    ] as const) {
      const w = await page([schedule({ firesWhileDown: down })], locale);
      const text = w.get('[data-testid="schedule-host-down"]').text();
      for (const word of words) expect(text, locale).toContain(word);
      expect(w.findAll('[data-testid="schedule-host-down-fire"]')).toHaveLength(1);
      for (const iso of Object.values(down[0] ?? {})) expect(text).toContain(exactTime(iso, locale));
      expect(text).not.toMatch(/\{(at|from|until)\}/);
      w.unmount();
    }
  });

  it('says nothing of downtime when the host ran through every fire', async () => {
    const w = await page([schedule({})], 'en');
    expect(w.find('[data-testid="schedule-host-down"]').exists()).toBe(false);
    w.unmount();
  });
});
