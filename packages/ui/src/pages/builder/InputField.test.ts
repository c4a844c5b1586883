import { type CatalogEntry, emptyGraph } from '@fengyu/protocol';
import { mount } from '@vue/test-utils';
import { createPinia, setActivePinia } from 'pinia';
import { beforeEach, describe, expect, it } from 'vitest';
import { nextTick } from 'vue';
import { createUiI18n } from '../../i18n/index';
import { useBuilder } from './builder.store';
import InputField from './InputField.vue';

/** The three input sources of a node argument, mounted against a real builder store. */

const producer: CatalogEntry = {
  name: 'produce',
  description: '',
  inputSchema: { type: 'object' },
  outputSchema: { type: 'object', properties: { count: { type: 'integer', examples: [2] }, files: { type: 'array', items: { type: 'string' } } } },
  effect: 'read',
  source: 'builtin',
  id: 'builtin:produce',
  schemaRevision: '1',
  idempotent: false,
  available: true,
};
const consumer: CatalogEntry = { ...producer, name: 'consume', id: 'builtin:consume', inputSchema: { type: 'object', properties: { files: { type: 'array', items: { type: 'string' } }, note: { type: 'string' } } } };

let pinia: ReturnType<typeof createPinia>;

function setup() {
  const b = useBuilder();
  const g = emptyGraph();
  g.nodes[0] = { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: { fields: [{ name: 'topic', type: 'text' }] } };
  g.nodes.push(
    { id: 'a', type: 'tool', tool: { name: 'produce' }, position: { x: 300, y: 0 }, data: { arguments: {} } },
    { id: 'b', type: 'tool', tool: { name: 'consume' }, position: { x: 600, y: 0 }, data: { arguments: { note: 'hello' } } },
  );
  b.graph = g;
  b.catalog = [producer, consumer];
  return b;
}

function mountField(name: string, schema: Record<string, unknown>) {
  return mount(InputField, { props: { nodeId: 'b', name, schema, required: false }, global: { plugins: [pinia, createUiI18n('en')] } });
}

beforeEach(() => {
  pinia = createPinia();
  setActivePinia(pinia);
});

describe('InputField sources', () => {
  it('manual: a schema widget edits the literal value', async () => {
    const b = setup();
    const w = mountField('note', { type: 'string' });
    expect(w.find('[data-source="manual"]').attributes('aria-checked')).toBe('true');
    const input = w.find('input[data-widget="text"]');
    expect((input.element as HTMLInputElement).value).toBe('hello');
    await input.setValue('changed');
    await input.trigger('change');
    expect(b.findStep('b')?.data.arguments.note).toBe('changed');
    expect(b.canUndo).toBe(true);
  });

  it('reference: picking an upstream output sets the reference and creates the edge', async () => {
    const b = setup();
    const w = mountField('files', { type: 'array', items: { type: 'string' } });
    await w.find('[data-source="reference"]').trigger('click');
    expect(b.findStep('b')?.data.sources?.files).toBe('reference');
    expect(b.graph.edges).toHaveLength(0);
    await w.find('[data-ref="{{node.a.result.files}}"] [data-testid="var-pick"]').trigger('click');
    expect(b.findStep('b')?.data.arguments.files).toBe('{{node.a.result.files}}');
    expect(b.graph.edges.map((e) => [e.source, e.target])).toEqual([['a', 'b']]);
    await nextTick();
    expect(w.find('[data-testid="ref-current"] code').text()).toBe('{{node.a.result.files}}');
  });

  it('reference: rows are filtered by the expected type, mismatches grayed with the reason', async () => {
    setup();
    const w = mountField('files', { type: 'array', items: { type: 'string' } });
    await w.find('[data-source="reference"]').trigger('click');
    const count = w.find('[data-ref="{{node.a.result.count}}"]');
    expect(count.classes()).toContain('dim');
    expect(count.find('[data-testid="var-pick"]').attributes('disabled')).toBeDefined();
    expect(count.text()).toContain('expects list, this is number');
    expect(w.find('[data-ref="{{node.a.result.files}}"]').classes()).not.toContain('dim');
  });

  it('expression: a template with references; unknown ones are flagged', async () => {
    const b = setup();
    const w = mountField('note', { type: 'string' });
    await w.find('[data-source="expression"]').trigger('click');
    const area = w.find('textarea[data-testid="expression"]');
    expect((area.element as HTMLTextAreaElement).value).toBe('hello');
    await area.setValue('Topic {{inputs.topic}} from {{node.ghost.result.x}}');
    await area.trigger('change');
    expect(b.findStep('b')?.data.arguments.note).toBe('Topic {{inputs.topic}} from {{node.ghost.result.x}}');
    expect(b.findStep('b')?.data.sources?.note).toBe('expression');
    await nextTick();
    const flagged = w.findAll('.bad-refs li').map((li) => li.text());
    expect(flagged).toEqual(['Unknown node in {{node.ghost.result.x}}']);
  });
});
