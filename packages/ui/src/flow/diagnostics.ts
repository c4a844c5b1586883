import { type CatalogEntry, fieldProblems, graphToPlan, isStepNode, type Locale, localize, type Problem, startNode, validateWorkflowDefinition, type WorkflowGraph } from '@fengyu/protocol';

/**
 * Inline diagnostics of the canvas: the graph is compiled and checked with protocol's
 * `validateWorkflowDefinition` (the very code the host validates with), plus the checks only a graph can have:
 * dangling connections and Start field names. (Unavailable tools are reported, though the host
 * lets a draft keep them.) Messages come from protocol's i18n tables.
 */

export interface Diagnostic {
  code: string;
  /** The node (step id) it concerns, when it concerns one. */
  nodeId?: string;
  edgeId?: string;
  field?: string;
  params: Record<string, unknown>;
}

const UI_MESSAGES: Record<Locale, Record<string, string>> = {
  en: {
    edge_dangling: 'A connection points at a node that no longer exists ({edge}).',
    field_name_invalid: 'Start field #{index} needs a name made of letters, digits, _ or - (not starting with a digit).',
    field_name_duplicate: 'Two Start fields are named "{name}".',
  },
  'zh-CN': {
    edge_dangling: '有一条连线指向已不存在的节点（{edge}）。',
    field_name_invalid: '开始节点第 {index} 个字段需要一个由字母、数字、_ 或 - 组成且不以数字开头的名称。',
    field_name_duplicate: '有两个开始节点字段都叫“{name}”。',
  },
};

export function diagnosticMessage(d: Diagnostic, locale: Locale): string {
  const own = UI_MESSAGES[locale][d.code];
  if (own) return own.replace(/\{(\w+)\}/g, (w, k: string) => (k in d.params ? String(d.params[k]) : w));
  return localize(d.code, d.params, locale);
}

/** The UI's own diagnostic messages (exposed for the i18n completeness test). */
export const DIAGNOSTIC_MESSAGES = UI_MESSAGES;

export function diagnose(graph: WorkflowGraph, catalog: readonly CatalogEntry[], goal?: string): Diagnostic[] {
  const out: Diagnostic[] = [];
  const ids = new Set([...graph.nodes.map((n) => n.id)]);
  for (const e of graph.edges) {
    if (!ids.has(e.source) || !ids.has(e.target)) out.push({ code: 'edge_dangling', edgeId: e.id, nodeId: ids.has(e.source) ? e.source : undefined, params: { edge: `${e.source} → ${e.target}` } });
  }
  const fields = startNode(graph)?.data.fields ?? [];
  for (const p of fieldProblems(fields)) out.push({ code: p.code, nodeId: startNode(graph)?.id, params: { index: p.index + 1, name: fields[p.index]?.name ?? '' } });
  if (!graph.nodes.some(isStepNode)) return out;
  const { plan, inputSchema } = graphToPlan(graph, goal?.trim() || undefined);
  const byName = new Map(catalog.map((e) => [e.name, e]));
  // The host's own save-time validator: the canvas and the host can never disagree.
  const result = validateWorkflowDefinition({ name: 'flow', inputSchema, plan }, { tool: (name) => byName.get(name) });
  if (!result.ok) out.push(...result.problems.map(fromProblem));
  return out;
}

function fromProblem(p: Problem): Diagnostic {
  const field = p.field?.startsWith('plan.') ? p.field.slice(5) : p.field;
  return { code: p.code, nodeId: p.stepId, field, params: p.params ?? {} };
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
