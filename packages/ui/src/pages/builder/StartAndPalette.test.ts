import { type CatalogEntry, emptyGraph, fieldsToSchema } from '@fengyu/protocol';
import { mount } from '@vue/test-utils';
import { createPinia, setActivePinia } from 'pinia';
import { beforeEach, describe, expect, it } from 'vitest';
import { nextTick } from 'vue';
import { createUiI18n } from '../../i18n/index';
import { useBuilder } from './builder.store';
import NodePalette from './NodePalette.vue';
import StartFieldsEditor from './StartFieldsEditor.vue';

/** The Start node's field editor and the palette's search and groups, mounted on a real store. */

let pinia: ReturnType<typeof createPinia>;
beforeEach(() => {
  pinia = createPinia();
  setActivePinia(pinia);
});

const entry = (name: string, origin: string, flowNode = true): CatalogEntry => ({
  name,
  description: `${name} tool`,
  inputSchema: { type: 'object' },
  effect: 'read',
  source: 'plugin',
  id: `${origin}:${name}`,
  schemaRevision: '1',
  idempotent: false,
  available: true,
  origin,
  ...(flowNode ? { flowNode: { label: name } } : {}),
});

const globals = () => ({ global: { plugins: [pinia, createUiI18n('en')] } });

describe('Start fields editor', () => {
  it('adds fields, edits name/type/required, and the input schema follows', async () => {
    const b = useBuilder();
    b.graph = emptyGraph();
    const w = mount(StartFieldsEditor, globals());
    await w.get('[data-testid="add-field"]').trigger('click');
    await nextTick();
    const row = w.get('.sf');
    await row.get('input.mono').setValue('workbook');
    await row.get('input.mono').trigger('change');
    await row.get('select').setValue('file');
    await row.get('select').trigger('change');
    const req = row.get('label.req input');
    (req.element as HTMLInputElement).checked = true;
    await req.trigger('change');
    await nextTick();
    const start = b.graph.nodes.find((n) => n.type === 'start');
    const fields = start?.type === 'start' ? start.data.fields : [];
    expect(fieldsToSchema(fields)).toMatchObject({ type: 'object', properties: { workbook: { type: 'string', format: 'fengyu-file' } }, required: ['workbook'] });
    expect((w.get('[data-testid="schema-json"]').element as HTMLTextAreaElement).value).toContain('"fengyu-file"');
  });

  it('applies a pasted JSON Schema, and names a bad one', async () => {
    const b = useBuilder();
    b.graph = emptyGraph();
    const w = mount(StartFieldsEditor, globals());
    const area = w.get('[data-testid="schema-json"]');
    await area.setValue(JSON.stringify({ type: 'object', properties: { region: { type: 'string', enum: ['East', 'West'] } } }));
    await w.findAll('button').at(-1)?.trigger('click');
    await nextTick();
    const start = b.graph.nodes.find((n) => n.type === 'start');
    expect(start?.type === 'start' ? start.data.fields : []).toEqual([expect.objectContaining({ name: 'region', type: 'text', options: ['East', 'West'] })]);
    await area.setValue('[1, 2');
    await w.findAll('button').at(-1)?.trigger('click');
    await nextTick();
    expect(w.find('.error-text').exists()).toBe(true);
  });
});

describe('node palette', () => {
  it('filters by search, collapses groups, and keeps undeclared tools behind "show all tools"', async () => {
    const b = useBuilder();
    b.catalog = [entry('excel_analyze', 'fan.summer.excel'), entry('email_send_batch', 'fan.summer.email'), entry('raw_tool', 'some.plugin', false)];
    const w = mount(NodePalette, globals());
    const names = () => w.findAll('li').map((li) => li.text());
    expect(names().some((n) => n.includes('raw_tool'))).toBe(false);
    await w.get('[data-testid="show-all-tools"]').setValue(true);
    expect(names().some((n) => n.includes('raw_tool'))).toBe(true);
    await w.get('[data-testid="palette-search"]').setValue('excel');
    expect(names().length).toBeGreaterThan(0);
    expect(names().every((n) => n.toLowerCase().includes('excel'))).toBe(true);
    await w.get('[data-testid="palette-search"]').setValue('');
    const group = w.findAll('.palette-group')[0];
    if (!group) throw new Error('the palette shows no group');
    const head = group.get('.group-head');
    await head.trigger('click');
    expect(head.attributes('aria-expanded')).toBe('false');
    expect((group.get('ul').element as HTMLElement).style.display).toBe('none');
  });
});
