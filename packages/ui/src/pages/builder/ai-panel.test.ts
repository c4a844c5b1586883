import { type CatalogEntry, diffGraphs, emptyGraph, graphFingerprint, planToGraph } from '@fengyu/protocol';
import { describe, expect, it } from 'vitest';
import { canvasFingerprint, diffCanvas, diffView, type Proposal, rehydrate, staleReason } from './ai-panel';

const echo: CatalogEntry = { name: 'echo', description: 'echo', inputSchema: { type: 'object' }, effect: 'read', source: 'builtin', id: 'builtin:echo', schemaRevision: 'r7', idempotent: false, available: true };

function proposal(): { current: ReturnType<typeof planToGraph>; p: Proposal } {
  const current = planToGraph({ steps: [{ id: 'a', tool: 'echo', arguments: {} }, { id: 'b', tool: 'echo', arguments: {}, dependsOn: ['a'] }] });
  const graph = planToGraph({ steps: [{ id: 'a', tool: 'echo', arguments: { x: 1 } }, { id: 'c', tool: 'echo', arguments: {} }] });
  return { current, p: { proposalId: 'p1', mode: 'edit', summary: '', graph, diff: diffGraphs(current, graph), problems: [], base: { fingerprint: graphFingerprint(current), workflowId: 'w', revision: 2 } } };
}

describe('AI panel proposals', () => {
  it('fingerprints the canvas the way the host does (parsed, key order ignored)', () => {
    const { current } = proposal();
    expect(canvasFingerprint(current)).toBe(graphFingerprint(current));
  });

  it('shows the proposal plus what it removes, each marked', () => {
    const { current, p } = proposal();
    const v = diffView(current, p);
    expect(v.nodes).toEqual({ c: 'added', a: 'changed', b: 'removed' });
    expect(v.graph.nodes.map((n) => n.id).sort()).toEqual(['a', 'b', 'c', 'start']);
    expect(Object.values(v.edges).sort()).toEqual(['added', 'removed']);
    const canvas = diffCanvas(v);
    expect(canvas.nodes.find((n) => n.id === 'b')?.class).toBe('fy-diff-removed');
    expect(canvas.nodes.find((n) => n.id === 'start')?.data.mark).toBe('same');
  });

  it('is stale once the canvas or the revision moved', () => {
    const { current, p } = proposal();
    expect(staleReason(p, current, { workflowId: 'w', revision: 2 })).toBeUndefined();
    const moved = structuredClone(current);
    moved.notes.push({ id: 'n', type: 'note', position: { x: 0, y: 0 }, data: { text: '' } });
    expect(staleReason(p, moved, { workflowId: 'w', revision: 2 })).toBe('canvas');
    expect(staleReason(p, current, { workflowId: 'w', revision: 3 })).toBe('revision');
    expect(staleReason(p, current, { workflowId: 'other', revision: 2 })).toBe('revision');
    expect(staleReason({ ...p, base: { fingerprint: graphFingerprint(emptyGraph()) } }, emptyGraph(), { revision: 0 })).toBeUndefined();
  });

  it('rehydrates tool nodes through the live catalog', () => {
    const { p } = proposal();
    const g = rehydrate(p, [echo]);
    const c = g.nodes.find((n) => n.id === 'c');
    expect(c?.type === 'tool' && c.tool).toEqual({ name: 'echo', id: 'builtin:echo', schemaRevision: 'r7' });
    expect(p.graph.nodes.find((n) => n.id === 'c')).toMatchObject({ tool: { name: 'echo' } });
  });
});
