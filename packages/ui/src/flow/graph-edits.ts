import { type CatalogEntry, type ConditionCase, GROUP_SIZE, type GraphNode, type GraphPosition, newEdgeId, newNodeId, type WorkflowGraph } from '@fengyu/protocol';
import { levelOf } from './groups';
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

/** A condition node with one case `yes` (a structured condition, or with `agent` a model condition: an instruction and case descriptions). */
export function addConditionNode(g: WorkflowGraph, position: GraphPosition, agent: boolean): string {
  const id = newNodeId(g, agent ? 'decide' : 'check');
  const cases: ConditionCase[] = agent ? [{ name: 'yes', description: '' }] : [{ name: 'yes', when: { all: [{ left: '', op: 'eq', right: '' }] } }];
  g.nodes.push({ id, type: 'condition', position, data: { arguments: {}, cases, ...(agent ? { instruction: '' } : {}) } });
  return id;
}

/** A Human Input node asking for one required text field. */
export function addInputNode(g: WorkflowGraph, position: GraphPosition): string {
  const id = newNodeId(g, 'ask');
  g.nodes.push({ id, type: 'input', position, data: { arguments: {}, form: { type: 'object', properties: { answer: { type: 'string', title: 'Answer' } }, required: ['answer'] } } });
  return id;
}

/** An empty forEach group (its body is dragged in), at `GROUP_SIZE`. */
export function addForEachNode(g: WorkflowGraph, position: GraphPosition): string {
  const id = newNodeId(g, 'each');
  g.nodes.push({ id, type: 'forEach', position, data: { arguments: {}, items: '', width: GROUP_SIZE.width, height: GROUP_SIZE.height } });
  return id;
}

export function addNote(g: WorkflowGraph, position: GraphPosition): string {
  const id = newNodeId(g, 'note');
  g.notes.push({ id, type: 'note', position, data: { text: '' } });
  return id;
}

/** A copy of a step or note, offset a little (in the same group); the Start node is never duplicated, a group is copied without its body. */
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

/** Removes nodes/notes (with their edges; a group with its body) and edges. */
export function removeElements(g: WorkflowGraph, ids: ReadonlySet<string>, edgeIds: ReadonlySet<string>): void {
  const all = new Set(ids);
  for (const n of g.nodes) if (n.type !== 'start' && n.type !== 'forEach' && n.parentId && ids.has(n.parentId)) all.add(n.id);
  ids = all;
  g.nodes = g.nodes.filter((n) => !ids.has(n.id));
  g.notes = g.notes.filter((n) => !ids.has(n.id));
  g.edges = g.edges.filter((e) => !edgeIds.has(e.id) && !ids.has(e.source) && !ids.has(e.target));
}

/** Connects source → target unless connected already or on different levels (a group's border is never crossed). */
export function ensureEdge(g: WorkflowGraph, source: string, target: string): void {
  if (g.edges.some((e) => e.source === source && e.target === target)) return;
  if (levelOf(g, source) !== levelOf(g, target)) return;
  g.edges.push({ id: newEdgeId(g, source, target), source, target });
}
