import { mount } from '@vue/test-utils';
import { describe, expect, it } from 'vitest';
import { defineComponent, h, ref, withDirectives } from 'vue';
import { vField } from './v-field';

// A field bound with v-field, next to a counter whose change re-renders the same component.
const Host = defineComponent({
  setup() {
    const name = ref('Routed flow');
    const tick = ref(0);
    return { name, tick };
  },
  render() {
    return h('div', [
      withDirectives(h('input', { 'data-t': 'f', onChange: (e: Event) => (this.name = (e.target as HTMLInputElement).value) }), [[vField, this.name]]),
      h('span', String(this.tick)),
    ]);
  },
});

describe('v-field', () => {
  it('keeps what the person typed through a re-render of its page, then commits it on change', async () => {
    const w = mount(Host, { attachTo: document.body });
    const input = w.find('[data-t="f"]').element as HTMLInputElement;
    expect(input.value).toBe('Routed flow');
    input.focus();
    input.value = 'Edited, not saved';
    (w.vm as unknown as { tick: number }).tick++;
    await w.vm.$nextTick();
    expect(w.find('span').text()).toBe('1');
    expect(input.value).toBe('Edited, not saved');
    input.dispatchEvent(new Event('change'));
    await w.vm.$nextTick();
    expect((w.vm as unknown as { name: string }).name).toBe('Edited, not saved');
    w.unmount();
  });

  it('shows a new bound value even while focused (undo, another tab reloaded)', async () => {
    const w = mount(Host, { attachTo: document.body });
    const input = w.find('[data-t="f"]').element as HTMLInputElement;
    input.focus();
    input.value = 'typing';
    (w.vm as unknown as { name: string }).name = 'Reloaded';
    await w.vm.$nextTick();
    expect(input.value).toBe('Reloaded');
    w.unmount();
  });

  it('shows the bound value when not focused', async () => {
    const w = mount(Host, { attachTo: document.body });
    const input = w.find('[data-t="f"]').element as HTMLInputElement;
    input.value = 'stray';
    (w.vm as unknown as { tick: number }).tick++;
    await w.vm.$nextTick();
    expect(input.value).toBe('Routed flow');
    w.unmount();
  });
});
