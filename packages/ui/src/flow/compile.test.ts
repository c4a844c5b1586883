import { type CatalogEntry, emptyGraph, graphToPlan, orderStepNodes, parseGraph, planToGraph, type WorkflowGraph } from '@fengyu/protocol';
import { describe, expect, it } from 'vitest';
import { diagnose } from './diagnostics';

function tool(name: string, inputSchema: Record<string, unknown> = { type: 'object' }): CatalogEntry {
  return { name, description: name, inputSchema, effect: 'read', source: 'builtin', id: `builtin:${name}`, schemaRevision: '1', idempotent: false, available: true };
}

function sample(): WorkflowGraph {
  const g = emptyGraph();
  g.nodes[0] = {
    id: 'start',
    type: 'start',
    position: { x: 0, y: 0 },
    data: { fields: [{ name: 'workbook', label: 'Workbook', type: 'file', required: true }, { name: 'column', type: 'text', example: 'Region' }] },
  };
  g.nodes.push(
    { id: 'split', type: 'tool', tool: { name: 'excel_execute' }, position: { x: 600, y: 0 }, data: { arguments: { file: '@file:workbook', by: '{{inputs.column}}' } } },
    { id: 'analyze', type: 'tool', tool: { name: 'excel_analyze' }, position: { x: 300, y: 0 }, data: { title: 'Analyze', arguments: { file: '@file:workbook' } } },
    { id: 'send', type: 'tool', tool: { name: 'email_send' }, position: { x: 900, y: 0 }, data: { arguments: { to: 'a@b.c', files: '{{node.split.result.files}}' }, requiresApproval: true, pinned: { result: { ok: 1 } } } },
  );
  g.edges.push(
    { id: 'e1', source: 'start', target: 'analyze' },
    { id: 'e2', source: 'analyze', target: 'split' },
    { id: 'e3', source: 'split', target: 'send', sourceHandle: 'field:files' },
  );
  g.notes.push({ id: 'note1', type: 'note', position: { x: 10, y: 300 }, data: { text: 'hello' } });
  return g;
}

describe('compile', () => {
  it('orders steps topologically and turns edges into dependsOn', () => {
    const { plan, inputSchema } = graphToPlan(sample());
    expect(plan.steps.map((s) => s.id)).toEqual(['analyze', 'split', 'send']);
    expect(plan.steps[0]).toEqual({ id: 'analyze', title: 'Analyze', tool: 'excel_analyze', arguments: { file: '@file:workbook' } });
    expect(plan.steps[1]?.dependsOn).toEqual(['analyze']);
    expect(plan.steps[2]).toMatchObject({ dependsOn: ['split'], requiresApproval: true, pinned: { result: { ok: 1 } } });
    expect(inputSchema).toEqual({
      type: 'object',
      properties: { workbook: { type: 'string', format: 'fengyu-file', title: 'Workbook' }, column: { type: 'string', examples: ['Region'] } },
      required: ['workbook'],
    });
  });

  it('round-trips plan → graph → plan', () => {
    const first = graphToPlan(sample());
    const rebuilt = planToGraph(first.plan, first.inputSchema);
    const second = graphToPlan(rebuilt);
    expect(second.plan).toEqual(first.plan);
    expect(second.inputSchema).toEqual(first.inputSchema);
  });

  it('keeps unmodelled schema keywords of Start fields through a round trip', () => {
    const schema = {
      type: 'object',
      properties: {
        account: { type: 'string', title: 'Account', 'x-fengyu-enum': { tool: 'email_accounts_list' } },
        out: { type: 'string', format: 'fengyu-directory', 'x-fengyu-auto': 'shared-directory' },
      },
      required: ['account'],
    };
    const g = planToGraph({ steps: [{ id: 'a', tool: 't', arguments: {} }] }, schema);
    expect(graphToPlan(g).inputSchema).toEqual(schema);
  });

  it('does not lose nodes caught in a cycle, and diagnoses the cycle', () => {
    const g = emptyGraph();
    g.nodes.push(
      { id: 'a', type: 'tool', tool: { name: 't' }, position: { x: 1, y: 0 }, data: { arguments: {} } },
      { id: 'b', type: 'tool', tool: { name: 't' }, position: { x: 2, y: 0 }, data: { arguments: {} } },
    );
    g.edges.push({ id: 'x', source: 'a', target: 'b' }, { id: 'y', source: 'b', target: 'a' });
    expect(orderStepNodes(g).map((n) => n.id)).toEqual(['a', 'b']);
    expect(diagnose(g, [tool('t')]).map((d) => d.code)).toContain('plan_cycle');
  });

  it('reports unknown references, missing required arguments, dangling edges and unavailable tools', () => {
    const g = emptyGraph();
    g.nodes.push(
      { id: 'a', type: 'tool', tool: { name: 'needs' }, position: { x: 1, y: 0 }, data: { arguments: { q: '{{node.ghost.result}}', r: '{{inputs.nope}}' } } },
      { id: 'b', type: 'tool', tool: { name: 'off' }, position: { x: 2, y: 0 }, data: { arguments: {} } },
    );
    g.edges.push({ id: 'd', source: 'a', target: 'missing' });
    const off = { ...tool('off'), available: false };
    const codes = diagnose(g, [tool('needs', { type: 'object', required: ['must'], properties: { must: { type: 'string' } } }), off]).map((d) => d.code);
    expect(codes).toEqual(expect.arrayContaining(['ref_unknown_step', 'ref_undeclared_input', 'step_invalid_arguments', 'edge_dangling', 'step_unavailable_tool']));
  });

  it('a model step compiles to an instruction without a tool', () => {
    const g = emptyGraph();
    g.nodes.push({ id: 'm', type: 'model', position: { x: 1, y: 0 }, data: { arguments: {}, instruction: 'Summarize' } });
    expect(graphToPlan(g).plan.steps).toEqual([{ id: 'm', instruction: 'Summarize' }]);
  });
});

describe('parseGraph (stored graphs are untrusted)', () => {
  it.each([null, 42, 'x', [], { nodes: 'no' }, {}])('rejects %j', (value) => {
    expect(parseGraph(value)).toBeUndefined();
  });

  it('drops malformed nodes and edges but keeps dangling edges for diagnostics', () => {
    const g = parseGraph({
      nodes: [{ id: 'start', type: 'start', position: { x: 0, y: 0 }, data: { fields: [] } }, { id: 'a', type: 'tool', tool: { name: 't' } }, { type: 'tool' }, { id: 'x', type: 'weird' }, null],
      edges: [{ id: 'e', source: 'a', target: 'gone' }, { id: 3 }, 'bad'],
      notes: [{ id: 'n', position: { x: 1, y: 1 } }, 5],
    });
    expect(g?.nodes.map((n) => n.id)).toEqual(['start', 'a']);
    expect(g?.nodes[1]).toMatchObject({ position: { x: 0, y: 0 }, data: { arguments: {} } });
    expect(g?.edges.map((e) => e.id)).toEqual(['e']);
    expect(g?.notes).toEqual([{ id: 'n', type: 'note', position: { x: 1, y: 1 }, data: { text: '' } }]);
    expect(diagnose(g as WorkflowGraph, [tool('t')]).map((d) => d.code)).toContain('edge_dangling');
  });
});
