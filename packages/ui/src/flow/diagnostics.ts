import { type CatalogEntry, checkGraph, type GraphDiagnostic, type Locale, localize, type WorkflowGraph } from '@fengyu/protocol';

/**
 * Inline diagnostics of the canvas: protocol's `checkGraph`, the very check the host's AI
 * authoring tools run (dangling connections, Start field names, and the save-time validator on
 * the compiled plan). Unavailable tools are reported, though the host lets a draft keep them.
 * Messages come from protocol's i18n tables.
 */

export type Diagnostic = GraphDiagnostic;

export function diagnosticMessage(d: Diagnostic, locale: Locale): string {
  return localize(d.code, d.params, locale);
}

export function diagnose(graph: WorkflowGraph, catalog: readonly CatalogEntry[], goal?: string): Diagnostic[] {
  const byName = new Map(catalog.map((e) => [e.name, e]));
  return checkGraph(graph, { tool: (name) => byName.get(name), goal });
}

export function diagnosticsByNode(list: readonly Diagnostic[]): Map<string, Diagnostic[]> {
  const map = new Map<string, Diagnostic[]>();
  for (const d of list) {
    if (!d.nodeId) continue;
    const arr = map.get(d.nodeId) ?? [];
    arr.push(d);
    map.set(d.nodeId, arr);
  }
  return map;
}
