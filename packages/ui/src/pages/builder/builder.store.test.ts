import type { CatalogEntry } from '@fengyu/protocol';
import { createPinia, setActivePinia } from 'pinia';
import { beforeEach, describe, expect, it } from 'vitest';
import { useBuilder } from './builder.store';

/** Structural editing through the builder store: every edit undoable, history capped at 50. */

const tool: CatalogEntry = { name: 'echo', description: '', inputSchema: { type: 'object' }, effect: 'read', source: 'builtin', id: 'builtin:echo', schemaRevision: '1', idempotent: false, available: true };

beforeEach(() => setActivePinia(createPinia()));

describe('builder store editing', () => {
  it('add, connect, move, remove — then undo everything back to the empty flow', () => {
    const b = useBuilder();
    const a = b.addTool(tool, { x: 300, y: 0 });
    const c = b.addTool(tool, { x: 600, y: 0 });
    expect([a, c]).toEqual(['echo', 'echo_2']);
    b.connect({ source: a, target: c, sourceHandle: 'out' });
    b.connect({ source: a, target: c }); // duplicate: ignored
    b.connect({ source: c, target: 'start' }); // into Start: refused
    expect(b.graph.edges).toHaveLength(1);
    b.move([{ id: a, position: { x: 310.4, y: 20 } }]);
    b.move([{ id: a, position: { x: 310, y: 20 } }]); // no change: no history entry
    const note = b.addNote({ x: 0, y: 300 });
    b.remove([a, note, 'start']); // Start cannot be removed
    expect(b.graph.nodes.map((n) => n.id)).toEqual(['start', c]);
    expect(b.graph.edges).toHaveLength(0);
    expect(b.graph.notes).toHaveLength(0);
    b.undo();
    expect(b.graph.nodes.find((n) => n.id === a)?.position).toEqual({ x: 310, y: 20 });
    expect(b.graph.edges).toHaveLength(1);
    for (let i = 0; i < 5; i++) b.undo();
    expect(b.graph.nodes.map((n) => n.id)).toEqual(['start']);
    expect(b.canUndo).toBe(false);
    b.redo();
    b.redo();
    expect(b.graph.nodes.map((n) => n.id)).toEqual(['start', a, c]);
  });

  it('keeps at most 50 undo steps', () => {
    const b = useBuilder();
    for (let i = 0; i < 60; i++) b.addNote({ x: i, y: 0 });
    let undone = 0;
    while (b.canUndo) {
      b.undo();
      undone++;
    }
    expect(undone).toBe(50);
    expect(b.graph.notes).toHaveLength(10);
  });

  it('picking a reference to an unconnected upstream node adds the edge', () => {
    const b = useBuilder();
    const a = b.addTool(tool, { x: 300, y: 0 });
    const c = b.addTool(tool, { x: 600, y: 0 });
    b.setArgument(c, 'value', `{{node.${a}.result.echoed}}`, 'reference');
    expect(b.graph.edges.map((e) => [e.source, e.target])).toEqual([[a, c]]);
    b.undo();
    expect(b.graph.edges).toHaveLength(0);
    expect(b.findStep(c)?.data.arguments.value).toBeUndefined();
  });

  it('is dirty after an edit and clean again after undoing it', () => {
    const b = useBuilder();
    expect(b.dirty).toBe(false);
    b.setMeta({ name: 'x' });
    expect(b.dirty).toBe(true);
    b.undo();
    expect(b.dirty).toBe(false);
  });
});
