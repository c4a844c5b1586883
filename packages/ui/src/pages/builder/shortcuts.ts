/** Keyboard shortcuts must not fire while the user types in a field. */
export function isEditableTarget(target: EventTarget | null): boolean {
  if (!target || !(target instanceof HTMLElement)) return false;
  if (target.isContentEditable) return true;
  return ['INPUT', 'TEXTAREA', 'SELECT'].includes(target.tagName);
}

/**
 * What the Delete key removes. vue-flow's own selection (nodes and edges picked on the canvas)
 * always; the builder's current node (the one the config panel shows, e.g. a node just added)
 * only while no edge is selected: selecting an edge is a new selection, so a node added
 * earlier is never deleted with it.
 */
export function deletionOf(selectedNodes: string[], selectedEdges: string[], current: string | undefined): { nodes: string[]; edges: string[] } {
  const nodes = [...selectedNodes];
  if (current && selectedEdges.length === 0 && !nodes.includes(current)) nodes.push(current);
  return { nodes, edges: [...selectedEdges] };
}
