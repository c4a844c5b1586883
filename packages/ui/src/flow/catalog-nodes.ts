import { jsonClone } from './json-clone';
import type { CatalogEntry, JsonSchema, StepNode, ToolRef, WorkflowGraph } from '@fengyu/protocol';

/**
 * Tools as canvas nodes: palette categories and colors (Flowise AgentFlow v2's palette colors,
 * one per category), declared nodes (catalog entries with `flowNode`) versus schema-derived ones,
 * and the catalog rule: a node whose tool disappeared is kept and marked
 * unavailable; when the tool returns with a new schema, its arguments are reconciled.
 */

export type CategoryId = 'basics' | 'plugin' | 'web' | 'mcp' | 'system' | 'workflow';
export type IconName = 'start' | 'model' | 'tool' | 'web' | 'mcp' | 'terminal' | 'flow' | 'note' | 'approval' | 'table' | 'mail' | 'unavailable' | 'split' | 'subtask' | 'loop';

export const COLORS = {
  start: '#7EE787',
  model: '#4DD0E1',
  approval: '#6E6EFD',
  web: '#FF7F7F',
  tool: '#d4a373',
  workflow: '#a3b18a',
  mcp: '#b8bedd',
  system: '#FFB938',
  note: '#fee440',
  condition: '#FFB938',
  conditionAgent: '#ff8fab',
  forEach: '#9C89B8',
  /** Human Input (AgentFlow v2's color for people in the loop). */
  input: '#6E6EFD',
  unavailable: '#666666',
} as const;

const CATEGORY_COLORS: Record<CategoryId, string> = {
  basics: COLORS.model,
  plugin: COLORS.tool,
  web: COLORS.web,
  mcp: COLORS.mcp,
  system: COLORS.system,
  workflow: COLORS.workflow,
};

const WEB_TOOLS = new Set(['web_fetch', 'web_search', 'http_request']);

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() ? v : undefined;
}

export function categoryOf(entry: Pick<CatalogEntry, 'name' | 'source'>): CategoryId {
  if (entry.source === 'workflow') return 'workflow';
  if (entry.source === 'mcp') return 'mcp';
  if (entry.source === 'plugin') return 'plugin';
  if (WEB_TOOLS.has(entry.name) || entry.name.startsWith('browser_')) return 'web';
  return 'system';
}

/** The group a palette item is listed under: plugins by plugin id, MCP tools by server. */
export function groupOf(entry: CatalogEntry): string {
  const declared = str(entry.flowNode?.category);
  if (declared) return declared;
  const cat = categoryOf(entry);
  if ((cat === 'plugin' || cat === 'mcp') && entry.origin) return `${cat}:${entry.origin}`;
  return cat;
}

export function iconOf(entry: CatalogEntry): IconName {
  const declared = str(entry.flowNode?.icon) as IconName | undefined;
  if (declared) return declared;
  const cat = categoryOf(entry);
  if (cat === 'web') return 'web';
  if (cat === 'mcp') return 'mcp';
  if (cat === 'workflow') return 'flow';
  if (entry.name === 'execute_command') return 'terminal';
  if (/excel|sheet|workbook/i.test(entry.name)) return 'table';
  if (/mail|send/i.test(entry.name)) return 'mail';
  return 'tool';
}

export function toolColor(entry: CatalogEntry | undefined): string {
  if (!entry?.available) return COLORS.unavailable;
  const declared = str(entry.flowNode?.color);
  if (declared && /^#[0-9a-fA-F]{6}$/.test(declared)) return declared;
  return CATEGORY_COLORS[categoryOf(entry)];
}

export function nodeColor(node: StepNode, entry: CatalogEntry | undefined): string {
  if (node.type === 'model') return COLORS.model;
  if (node.type === 'condition') return node.data.instruction !== undefined ? COLORS.conditionAgent : COLORS.condition;
  if (node.type === 'forEach') return COLORS.forEach;
  if (node.type === 'input') return COLORS.input;
  if (!entry?.available) return COLORS.unavailable;
  if (node.data.requiresApproval) return COLORS.approval;
  return toolColor(entry);
}

export function isDeclared(entry: CatalogEntry): boolean {
  return !!entry.flowNode && typeof entry.flowNode === 'object';
}

export interface PaletteItem {
  key: string;
  kind: 'tool' | 'model' | 'note' | 'control';
  label: string;
  description: string;
  group: string;
  color: string;
  icon: IconName;
  declared: boolean;
  entry?: CatalogEntry;
  /** The tool's name and the manifest's search keywords, for palette search. */
  name?: string;
  keywords?: string[];
  /** Why the tool cannot be placed now (a message code, e.g. `web_search_unconfigured`); shown greyed with the reason. */
  unavailable?: string;
}

/** A declaration's text in the UI's language: `flowNode.i18n[locale][key]`, else the declaration's own. */
export function localizedFlowText(entry: CatalogEntry, key: 'label' | 'help' | 'description', locale?: string): string | undefined {
  const i18n = entry.flowNode?.i18n as Record<string, Record<string, unknown>> | undefined;
  return (locale ? str(i18n?.[locale]?.[key]) : undefined) ?? str(entry.flowNode?.[key]);
}

type Overlay = Record<string, unknown>;
const overlayOf = (v: unknown): Overlay | undefined => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Overlay) : undefined);

/** Declared fields with a locale's `{label, help}` laid over them (keys the declaration lacks are ignored). */
function overlayFields(fields: unknown, over: unknown): unknown {
  const base = overlayOf(fields);
  const texts = overlayOf(over);
  if (!base || !texts) return fields;
  return Object.fromEntries(
    Object.entries(base).map(([k, f]) => {
      const t = overlayOf(texts[k]);
      const field = overlayOf(f);
      if (!t || !field) return [k, f];
      return [k, { ...field, ...(str(t.label) ? { label: t.label } : {}), ...(str(t.help) ? { help: t.help } : {}) }];
    }),
  );
}

/**
 * A catalog entry as the UI shows it in `locale`: the declaration's `i18n[locale]` texts (label,
 * help, category, description, input and output labels and help) replace the declared ones; a
 * text missing from the locale keeps the declared one.
 */
export function localizedEntry<T extends CatalogEntry | undefined>(entry: T, locale?: string): T {
  if (!entry || !locale || !entry.flowNode) return entry;
  const over = overlayOf(overlayOf(entry.flowNode.i18n)?.[locale]);
  if (!over) return entry;
  const fn = entry.flowNode;
  return {
    ...entry,
    description: str(over.description) ?? entry.description,
    flowNode: {
      ...fn,
      ...(str(over.label) ? { label: over.label } : {}),
      ...(str(over.help) ? { help: over.help } : {}),
      ...(str(over.category) ? { category: over.category } : {}),
      ...(fn.inputs ? { inputs: overlayFields(fn.inputs, over.inputs) } : {}),
      ...(fn.outputs ? { outputs: overlayFields(fn.outputs, over.outputs) } : {}),
    },
  };
}

export function paletteItems(catalog: readonly CatalogEntry[], showAll: boolean, locale?: string): PaletteItem[] {
  const tools = catalog
    // an unavailable tool is listed only when the host says why (it can be made available here)
    .filter((e) => (e.available || !!e.unavailableReason) && e.source !== 'workflow' && (showAll || isDeclared(e)))
    .map((e) => localizedEntry(e, locale))
    .map<PaletteItem>((e) => ({
      key: `tool:${e.id}`,
      kind: 'tool',
      label: localizedFlowText(e, 'label', locale) ?? e.name,
      description: localizedFlowText(e, 'help', locale) ?? localizedFlowText(e, 'description', locale) ?? e.description,
      group: groupOf(e),
      color: toolColor(e),
      icon: iconOf(e),
      declared: isDeclared(e),
      entry: e,
      name: e.name,
      keywords: Array.isArray(e.flowNode?.keywords) ? (e.flowNode.keywords as unknown[]).filter((k): k is string => typeof k === 'string') : [],
      ...(e.available ? {} : { unavailable: e.unavailableReason }),
    }))
    .sort((a, b) => Number(b.declared) - Number(a.declared) || a.group.localeCompare(b.group) || a.label.localeCompare(b.label));
  return tools;
}

/** Finds a node's tool: by stable id first, then by name. */
export function resolveTool(ref: ToolRef, catalog: readonly CatalogEntry[]): CatalogEntry | undefined {
  return (ref.id ? catalog.find((e) => e.id === ref.id) : undefined) ?? catalog.find((e) => e.name === ref.name);
}

export interface Reconciled {
  arguments: Record<string, unknown>;
  dropped: string[];
  added: string[];
}

/** Fits a node's arguments to a tool's (new) input schema: unknown keys dropped, new defaults added. */
export function reconcileArguments(args: Record<string, unknown>, schema: JsonSchema): Reconciled {
  const props = (schema.properties ?? undefined) as Record<string, JsonSchema> | undefined;
  const out: Record<string, unknown> = {};
  const dropped: string[] = [];
  const added: string[] = [];
  for (const [k, v] of Object.entries(args)) {
    if (props && !(k in props) && schema.additionalProperties !== true) dropped.push(k);
    else out[k] = v;
  }
  for (const [k, p] of Object.entries(props ?? {})) {
    if (!(k in out) && p && typeof p === 'object' && 'default' in p) {
      out[k] = jsonClone(p.default);
      added.push(k);
    }
  }
  return { arguments: out, dropped, added };
}

export interface CatalogSync {
  /** Node ids whose tool is missing or disabled. */
  unavailable: string[];
  /** Nodes reconciled to a newer schema, with what changed. */
  reconciled: Array<{ nodeId: string } & Reconciled>;
}

/**
 * Applies the current catalog to a graph in place: binds tool identities and schema revisions,
 * reconciles arguments of returning/upgraded tools. Unavailable nodes are left untouched.
 */
export function syncWithCatalog(graph: WorkflowGraph, catalog: readonly CatalogEntry[]): CatalogSync {
  const result: CatalogSync = { unavailable: [], reconciled: [] };
  for (const node of graph.nodes) {
    if (node.type !== 'tool') continue;
    const entry = resolveTool(node.tool, catalog);
    if (!entry?.available) {
      result.unavailable.push(node.id);
      continue;
    }
    const stale = node.tool.schemaRevision !== undefined && node.tool.schemaRevision !== entry.schemaRevision;
    if (stale) {
      const r = reconcileArguments(node.data.arguments ?? {}, entry.inputSchema);
      node.data.arguments = r.arguments;
      if (r.dropped.length > 0 || r.added.length > 0) result.reconciled.push({ nodeId: node.id, ...r });
    }
    node.tool = { name: entry.name, id: entry.id, schemaRevision: entry.schemaRevision };
  }
  return result;
}
