import { type CatalogEntry, type GraphNode, type GraphPosition, newEdgeId, newNodeId, type WorkflowGraph } from '@fengyu/protocol';
import { jsonClone } from './json-clone';

/**
 * Structural edits of the document, as plain mutations of a graph (the builder store wraps each in
 * an undo snapshot). Each returns what it created, or nothing when the edit does not apply.
 */

export function addToolNode(g: WorkflowGraph, entry: CatalogEntry, position: GraphPosition): string {
  const id = newNodeId(g, entry.name);
  const defaults = (entry.flowNode?.defaults ?? {}) as Record<string, unknown>;
  const requiresApproval = entry.flowNode?.requiresApproval === true;
  g.nodes.push({
    id,
    type: 'tool',
    tool: { name: entry.name, id: entry.id, schemaRevision: entry.schemaRevision },
    position,
    data: { arguments: jsonClone(defaults), ...(requiresApproval ? { requiresApproval } : {}) },
  });
  return id;
}

export function addModelNode(g: WorkflowGraph, position: GraphPosition): string {
  const id = newNodeId(g, 'model');
  g.nodes.push({ id, type: 'model', position, data: { arguments: {}, instruction: '' } });
  return id;
}

export function addNote(g: WorkflowGraph, position: GraphPosition): string {
  const id = newNodeId(g, 'note');
  g.notes.push({ id, type: 'note', position, data: { text: '' } });
  return id;
}

/** A copy of a step or note, offset a little; the Start node is never duplicated. */
export function duplicateNode(g: WorkflowGraph, id: string): string | undefined {
  const node = g.nodes.find((n) => n.id === id && n.type !== 'start');
  const note = g.notes.find((n) => n.id === id);
  const source = node ?? note;
  if (!source) return undefined;
  const copyId = newNodeId(g, id.replace(/_\d+$/, ''));
  const position = { x: source.position.x + 40, y: source.position.y + 60 };
  if (note) g.notes.push({ ...jsonClone(note), id: copyId, position });
  else g.nodes.push({ ...(jsonClone(node) as GraphNode), id: copyId, position } as GraphNode);
  return copyId;
}

/** The ids `removeElements` would drop (Start and unknown ids excluded). */
export function removableIds(g: WorkflowGraph, ids: readonly string[]): Set<string> {
  const known = (id: string) => g.notes.some((n) => n.id === id) || g.nodes.some((n) => n.id === id && n.type !== 'start');
  return new Set(ids.filter(known));
}

/** Removes nodes/notes (with their edges) and edges. */
export function removeElements(g: WorkflowGraph, ids: ReadonlySet<string>, edgeIds: ReadonlySet<string>): void {
  g.nodes = g.nodes.filter((n) => !ids.has(n.id));
  g.notes = g.notes.filter((n) => !ids.has(n.id));
  g.edges = g.edges.filter((e) => !edgeIds.has(e.id) && !ids.has(e.source) && !ids.has(e.target));
}

export function ensureEdge(g: WorkflowGraph, source: string, target: string): void {
  if (g.edges.some((e) => e.source === source && e.target === target)) return;
  g.edges.push({ id: newEdgeId(g, source, target), source, target });
}
