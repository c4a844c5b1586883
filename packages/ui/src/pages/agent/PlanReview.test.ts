import type { AgentPlan } from '@fengyu/protocol';
import { mount } from '@vue/test-utils';
import { describe, expect, it } from 'vitest';
import { createUiI18n } from '../../i18n/index';
import PlanReview from './PlanReview.vue';

const plan: AgentPlan = { steps: [{ id: 'a', tool: 'echo', arguments: { text: 'hi' } }, { id: 'b', instruction: 'sum up', dependsOn: ['a'] }, { id: 'c', tool: 'echo', arguments: {} }] };

function mountReview() {
  let current = structuredClone(plan);
  const w = mount(PlanReview, {
    props: { modelValue: current, 'onUpdate:modelValue': (p: AgentPlan) => { current = p; void w.setProps({ modelValue: p }); } },
    global: { plugins: [createUiI18n('en')] },
  });
  return { w, get: () => current };
}

describe('PlanReview', () => {
  it('reorders, edits an argument and an instruction, trims and removes through the list', async () => {
    const { w, get } = mountReview();
    await w.findAll('[data-testid="step-down"]')[0]?.trigger('click');
    expect(get().steps.map((s) => s.id)).toEqual(['b', 'a', 'c']);
    const arg = w.find('[data-testid="step-arg"][data-arg="text"]');
    await arg.setValue('{"n": 2}');
    expect(get().steps[1]?.arguments?.text).toEqual({ n: 2 });
    await w.find('[data-testid="step-instruction"]').setValue('shorter');
    expect(get().steps[0]?.instruction).toBe('shorter');
    await w.findAll('[data-testid="step-trim"]')[1]?.trigger('click');
    expect(get().steps.map((s) => s.id)).toEqual(['b', 'a']);
    await w.findAll('[data-testid="step-remove"]')[1]?.trigger('click');
    expect(get().steps.map((s) => s.id)).toEqual(['b']);
    expect(get().steps[0]?.dependsOn).toBeUndefined();
    expect(w.find('[data-testid="step-remove"]').attributes('disabled')).toBeDefined();
  });

  it('shows validation problems next to their step', () => {
    const w = mount(PlanReview, { props: { modelValue: plan, problems: new Map([['c', ['tool: unknown tool']]]) }, global: { plugins: [createUiI18n('en')] } });
    expect(w.find('[data-step-id="c"]').text()).toContain('unknown tool');
  });
});
