import { type CatalogEntry, emptyGraph, FIELD_TYPES, fieldsToSchema, type StartField, validateWorkflowDefinition, type WorkflowGraph } from '@fengyu/protocol';
import { describe, expect, it } from 'vitest';
import { flattenRows, variableTree } from './variables';
import { compatible } from './value-kinds';

const splitEntry: CatalogEntry = {
  name: 'excel_execute',
  description: '',
  inputSchema: { type: 'object' },
  outputSchema: {
    type: 'object',
    properties: {
      count: { type: 'integer', examples: [3] },
      files: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' }, path: { type: 'string', format: 'fengyu-file' } } } },
    },
  },
  effect: 'write',
  source: 'plugin',
  id: 'fan.summer.excel:excel_execute',
  schemaRevision: '1',
  idempotent: false,
  available: true,
};

function graph(): WorkflowGraph {
  const g = emptyGraph();
  g.nodes[0] = { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: { fields: [{ name: 'subject', type: 'text' }, { name: 'limit', type: 'number' }] } };
  g.nodes.push(
    { id: 'split', type: 'tool', tool: { name: 'excel_execute' }, position: { x: 1, y: 0 }, data: { arguments: {} } },
    { id: 'send', type: 'tool', tool: { name: 'email_send' }, position: { x: 2, y: 0 }, data: { arguments: {} } },
    { id: 'after', type: 'tool', tool: { name: 'email_send' }, position: { x: 3, y: 0 }, data: { arguments: {} } },
  );
  g.edges.push({ id: 'e', source: 'send', target: 'after' });
  return g;
}

const ctx = (lastResults?: Map<string, unknown>) => ({ graph: graph(), tool: (n: string) => (n === 'excel_execute' ? splitEntry : undefined), lastResults });

describe('variable tree', () => {
  it('lists inputs and candidate upstream nodes, never downstream ones or itself', () => {
    const groups = variableTree(ctx(), 'send', 'any');
    expect(groups.map((g) => g.id)).toEqual(['inputs', 'split']);
    expect(groups.find((g) => g.id === 'split')?.connected).toBe(false);
  });

  it('expands object fields and [0] samples of arrays into reference paths', () => {
    const rows = flattenRows(variableTree(ctx(), 'send', 'any')[1]?.rows ?? []);
    expect(rows.map((r) => r.ref)).toEqual([
      '{{node.split.result}}',
      '{{node.split.result.count}}',
      '{{node.split.result.files}}',
      '{{node.split.result.files[0]}}',
      '{{node.split.result.files[0].name}}',
      '{{node.split.result.files[0].path}}',
    ]);
    expect(rows[1]?.example).toBe(3);
  });

  it('filters by the expected type: mismatches are grayed with the kinds', () => {
    const rows = flattenRows(variableTree(ctx(), 'send', 'list')[1]?.rows ?? []);
    const byRef = new Map(rows.map((r) => [r.ref, r]));
    expect(byRef.get('{{node.split.result.files}}')?.compatible).toBe(true);
    expect(byRef.get('{{node.split.result.count}}')).toMatchObject({ compatible: false, mismatch: { expected: 'list', actual: 'number' } });
    const inputs = variableTree(ctx(), 'send', 'number')[0]?.rows ?? [];
    expect(inputs.map((r) => [r.ref, r.compatible])).toEqual([
      ['{{inputs.subject}}', false],
      ['{{inputs.limit}}', true],
    ]);
  });

  it('upgrades to last-run values, discovering undeclared fields', () => {
    const last = new Map<string, unknown>([['split', { count: 2, files: [{ name: 'a.xlsx', path: '/x' }], extra: true }]]);
    const rows = flattenRows(variableTree(ctx(last), 'send', 'any')[1]?.rows ?? []);
    const extra = rows.find((r) => r.ref === '{{node.split.result.extra}}');
    expect(extra).toMatchObject({ kind: 'boolean', hasLast: true, lastValue: true });
    expect(rows.find((r) => r.ref === '{{node.split.result.files[0].name}}')?.lastValue).toBe('a.xlsx');
  });

  it('compatibility rules', () => {
    expect(compatible('text', 'number').ok).toBe(true);
    expect(compatible('file', 'text').ok).toBe(true);
    expect(compatible('object', 'list').ok).toBe(false);
    expect(compatible('number', 'any').ok).toBe(true);
  });
});

describe('every offered input reference is one the validator accepts', () => {
  const fields: StartField[] = [
    ...FIELD_TYPES.map((type) => ({ name: `f_${type}`, type })),
    { name: 'shared', type: 'text', extra: { format: 'fengyu-directory', 'x-fengyu-auto': 'shared-directory' } },
  ];
  const g = emptyGraph();
  g.nodes[0] = { id: 'start', type: 'start', position: { x: 0, y: 0 }, data: { fields } };
  g.nodes.push({ id: 'use', type: 'tool', tool: { name: 'take' }, position: { x: 1, y: 0 }, data: { arguments: {} } });
  const take = { name: 'take', inputSchema: { type: 'object' }, effect: 'read', idempotent: true, source: 'builtin', available: true } as const;
  const saveWith = (value: string) =>
    validateWorkflowDefinition({ name: 'x', inputSchema: fieldsToSchema(fields), plan: { steps: [{ id: 'use', tool: 'take', arguments: { value } }] } }, { tool: (n) => (n === 'take' ? take : undefined) });

  for (const expected of ['text', 'number', 'boolean', 'object', 'list', 'file', 'any'] as const) {
    for (const inText of [false, true]) {
      it(`${inText ? 'expression' : 'reference'} picks for a ${expected} argument`, () => {
        const rows = flattenRows(variableTree({ graph: g, tool: () => undefined }, 'use', expected, { inText }).find((x) => x.id === 'inputs')?.rows ?? []);
        const pickable = rows.filter((r) => r.compatible);
        expect(pickable.length).toBeGreaterThan(0);
        for (const r of pickable) {
          const value = inText ? `Label: ${r.ref}` : r.ref;
          const result = saveWith(value);
          expect(result.ok ? [] : result.problems.map((p) => `${p.code} ${JSON.stringify(p.params)}`), `${r.label} → ${value}`).toEqual([]);
        }
      });
    }
  }

  it('offers file inputs as @file:<name> with no parts, and never inside an expression', () => {
    const rows = variableTree({ graph: g, tool: () => undefined }, 'use', 'file').find((x) => x.id === 'inputs')?.rows ?? [];
    expect(rows.find((r) => r.label === 'f_file')).toMatchObject({ ref: '@file:f_file', kind: 'file', compatible: true, children: [] });
    expect(rows.find((r) => r.label === 'shared')).toMatchObject({ ref: '@file:shared', kind: 'file', compatible: true });
    const inText = variableTree({ graph: g, tool: () => undefined }, 'use', 'any', { inText: true }).find((x) => x.id === 'inputs')?.rows ?? [];
    expect(inText.find((r) => r.label === 'f_file')).toMatchObject({ compatible: false, wholeOnly: true });
    expect(inText.find((r) => r.label === 'f_text')).toMatchObject({ ref: '{{inputs.f_text}}', compatible: true });
  });
});

describe('secrets in the Reference picker', () => {
  it('offers the owner’s secrets by name (a lock, never a value) to tool nodes only', () => {
    const g = graph();
    g.nodes.push({ id: 'think', type: 'model', position: { x: 4, y: 0 }, data: { instruction: 'x' } } as WorkflowGraph['nodes'][number]);
    const c = { graph: g, tool: () => undefined, secretNames: ['API_TOKEN', 'SMTP_PASS'] };
    const secrets = variableTree(c, 'send', 'text').find((gr) => gr.id === 'secrets');
    expect(secrets?.rows.map((r) => [r.ref, r.label, r.secret, r.compatible, r.example, r.lastValue])).toEqual([
      ['{{secrets.API_TOKEN}}', 'API_TOKEN', true, true, undefined, undefined],
      ['{{secrets.SMTP_PASS}}', 'SMTP_PASS', true, true, undefined, undefined],
    ]);
    expect(variableTree(c, 'think', 'text').some((gr) => gr.id === 'secrets')).toBe(false);
    expect(variableTree({ ...c, secretNames: [] }, 'send', 'text').some((gr) => gr.id === 'secrets')).toBe(false);
    expect(variableTree(c, 'send', 'number').find((gr) => gr.id === 'secrets')?.rows[0]?.compatible).toBe(false);
  });
});
