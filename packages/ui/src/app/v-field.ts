import type { Directive } from 'vue';

type Field = HTMLInputElement | HTMLTextAreaElement;

/**
 * `v-field="value"` binds a text field that commits on `change`: the field shows its bound value,
 * except while the person is typing in it and the value has not changed — a re-render caused by
 * anything else on the page (a list loading, a clock ticking) never overwrites what they typed
 * before it is committed. (A plain `:value` is written back into the element on every render.)
 */
export const vField: Directive<Field, string | number | null | undefined> = {
  mounted(el, { value }) {
    el.value = text(value);
  },
  beforeUpdate(el, { value, oldValue }) {
    if (el.ownerDocument.activeElement === el && value === oldValue) return;
    const next = text(value);
    if (el.value !== next) el.value = next;
  },
};

const text = (value: string | number | null | undefined) => (value === null || value === undefined ? '' : String(value));
