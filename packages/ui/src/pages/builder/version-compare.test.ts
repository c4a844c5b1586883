import { planToGraph } from '@fengyu/protocol';
import { describe, expect, it } from 'vitest';
import { compareViews, isSame, sideGraph } from './version-compare';

const plan = (ids: string[]) => ({ steps: ids.map((id) => ({ id, tool: 'echo', arguments: {} })) });

describe('compareViews', () => {
  it('marks removed and changed nodes on the older side, added and changed on the newer', () => {
    const from = planToGraph(plan(['a', 'b', 'c']));
    const to = planToGraph(plan(['a', 'c', 'd']));
    const diff = { steps: { added: ['d'], removed: ['b'], changed: [{ id: 'c', fields: ['arguments'] }] }, inputs: { added: [], removed: [], changed: [] } };
    const { left, right } = compareViews(from, to, diff);
    expect(left.nodes).toEqual({ b: 'removed', c: 'changed' });
    expect(right.nodes).toEqual({ d: 'added', c: 'changed' });
    expect(isSame(diff)).toBe(false);
    expect(isSame({ steps: { added: [], removed: [], changed: [] }, inputs: { added: [], removed: [], changed: [] } })).toBe(true);
  });

  it('rebuilds a graph for a version saved without one', () => {
    const g = sideGraph({ graph: null, plan: plan(['x']), inputSchema: { type: 'object', properties: {} } });
    expect(g.nodes.map((n) => n.id)).toContain('x');
  });
});
