import type { AgentPlan, JsonSchema } from '@fengyu/protocol';

/**
 * Rebuilds a canvas graph for a definition saved without one (API clients, older definitions,
 * templates), in the UI's document shape (`packages/ui/src/flow/graph.ts`, version 1):
 * `{version, nodes: [start, tool|model…], edges, notes}`. Saved positions (`layout`, by step id)
 * win; other steps are laid out by dependency depth. Pure.
 */

const GRAPH_VERSION = 1;
const START_ID = 'start';
const START_POS = { x: 80, y: 200 };
const COLUMN = 300;
const ROW = 160;
const MODELLED = new Set(['type', 'title', 'description', 'enum', 'examples', 'format', 'items']);

type Position = { x: number; y: number };

function fieldType(prop: JsonSchema): string {
  if (prop.format === 'fengyu-file') return 'file';
  const map: Record<string, string> = { number: 'number', integer: 'integer', boolean: 'boolean', array: 'list', object: 'object' };
  return map[String(prop.type)] ?? 'text';
}

/** Start node fields from the input schema (unmodelled keywords kept in `extra`). */
export function startFields(schema: JsonSchema | undefined): Array<Record<string, unknown>> {
  const props = (schema?.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set(Array.isArray(schema?.required) ? (schema.required as string[]) : []);
  return Object.entries(props).map(([name, prop]) => {
    const field: Record<string, unknown> = { name, type: fieldType(prop) };
    if (typeof prop.title === 'string') field.label = prop.title;
    if (typeof prop.description === 'string') field.description = prop.description;
    if (required.has(name)) field.required = true;
    if (Array.isArray(prop.enum)) field.options = prop.enum.map(String);
    if (Array.isArray(prop.examples) && prop.examples.length > 0) field.example = prop.examples[0];
    const extra: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(prop)) if (!MODELLED.has(k)) extra[k] = v;
    if (prop.format !== undefined && prop.format !== 'fengyu-file') extra.format = prop.format;
    const items = prop.items as JsonSchema | undefined;
    if (items !== undefined && !(Object.keys(items).length === 1 && items.type === 'string')) extra.items = items;
    if (Object.keys(extra).length > 0) field.extra = extra;
    return field;
  });
}

function depths(plan: AgentPlan): Map<string, number> {
  const ids = new Set(plan.steps.map((s) => s.id));
  const byId = new Map(plan.steps.map((s) => [s.id, s]));
  const memo = new Map<string, number>();
  const depthOf = (id: string, seen: Set<string>): number => {
    const known = memo.get(id);
    if (known !== undefined) return known;
    const parents = (byId.get(id)?.dependsOn ?? []).filter((d) => ids.has(d) && !seen.has(d));
    const value = parents.length === 0 ? 1 : 1 + Math.max(...parents.map((p) => depthOf(p, new Set([...seen, id]))));
    memo.set(id, value);
    return value;
  };
  for (const s of plan.steps) depthOf(s.id, new Set([s.id]));
  return memo;
}

export function rebuildGraph(plan: AgentPlan, inputSchema: JsonSchema | undefined, layout?: Record<string, Position> | null): Record<string, unknown> {
  const nodes: Array<Record<string, unknown>> = [{ id: START_ID, type: 'start', position: { ...(layout?.[START_ID] ?? START_POS) }, data: { fields: startFields(inputSchema) } }];
  const edges: Array<Record<string, unknown>> = [];
  const depth = depths(plan);
  const rows = new Map<number, number>();
  for (const step of plan.steps) {
    const col = depth.get(step.id) ?? 1;
    const row = rows.get(col) ?? 0;
    rows.set(col, row + 1);
    const position = layout?.[step.id] ? { ...layout[step.id] } : { x: START_POS.x + col * COLUMN, y: START_POS.y + row * ROW };
    const data = {
      ...(step.title ? { title: step.title } : {}),
      arguments: structuredClone(step.arguments ?? {}),
      ...(step.instruction !== undefined && !step.tool ? { instruction: step.instruction } : {}),
      ...(step.requiresApproval ? { requiresApproval: true } : {}),
      ...(step.retry ? { retry: { ...step.retry } } : {}),
      ...(step.pinned ? { pinned: { result: structuredClone(step.pinned.result) } } : {}),
    };
    nodes.push(step.tool ? { id: step.id, type: 'tool', tool: { name: step.tool }, position, data } : { id: step.id, type: 'model', position, data });
    const parents = step.dependsOn ?? [];
    if (parents.length === 0) edges.push({ id: `e_${START_ID}_${step.id}`, source: START_ID, target: step.id });
    for (const p of parents) edges.push({ id: `e_${p}_${step.id}`, source: p, target: step.id });
  }
  return { version: GRAPH_VERSION, nodes, edges, notes: [] };
}
