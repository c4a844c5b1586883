import { mount } from '@vue/test-utils';
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
