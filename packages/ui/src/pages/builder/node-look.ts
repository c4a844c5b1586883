import { type CatalogEntry, fieldSchema, type JsonSchema, type StepNode } from '@fengyu/protocol';
import { computed } from 'vue';
import { useI18n } from 'vue-i18n';
import { COLORS, type IconName, iconOf, localizedEntry, nodeColor } from '../../flow/catalog-nodes';
import { alpha, darken } from '../../flow/color';
import { schemaExample, schemaKind, type ValueKind } from '../../flow/value-kinds';
import { outputSchemaOf } from '../../flow/variables';
import type { RunBadge } from '../../run/run-state';
import { useBuilder } from './builder.store';

/** What a canvas card shows for one document node: colors, icon, typed output rows, badges. */

export interface PortRow {
  name: string;
  kind: ValueKind;
  description?: string;
  example?: unknown;
}

function rowsOf(schema: JsonSchema | undefined): PortRow[] {
  const props = (schema?.properties ?? {}) as Record<string, JsonSchema>;
  return Object.entries(props).map(([name, s]) => ({ name, kind: schemaKind(s), description: typeof s.description === 'string' ? s.description : undefined, example: schemaExample(s) }));
}

export function cardStyle(color: string, selected: boolean) {
  return {
    '--node-color': color,
    '--node-bg': darken(color, 0.8),
    '--node-bg-hover': darken(color, 0.7),
    '--node-border': alpha(color, 0.5),
    '--node-border-hover': alpha(color, 0.8),
    borderColor: selected ? color : undefined,
    boxShadow: selected ? `0 0 0 1px ${color}` : undefined,
  };
}

/** The run badge's glyph per status. */
export const BADGE_ICONS: Record<RunBadge, IconName | 'check' | 'alert' | 'history' | 'skip'> = { done: 'check', failed: 'alert', awaiting: 'approval', running: 'history', skipped: 'skip' };

/** The branch a finished condition took (its result is `{"branch": "<name>"}`). */
function branchOf(result: unknown): string | undefined {
  const b = result && typeof result === 'object' ? (result as { branch?: unknown }).branch : undefined;
  return typeof b === 'string' ? b : undefined;
}

/** A step node's icon: by kind for model, condition and forEach nodes, else by its tool. */
function iconFor(node: StepNode, entry: CatalogEntry | undefined, unavailable: boolean): IconName {
  if (node.type === 'model') return 'model';
  if (node.type === 'condition') return node.data.instruction !== undefined ? 'subtask' : 'split';
  if (node.type === 'forEach') return 'loop';
  if (node.type === 'input') return 'approval';
  if (unavailable) return 'unavailable';
  if (node.data.requiresApproval) return 'approval';
  return entry ? iconOf(entry) : 'tool';
}

export function useNodeLook(nodeId: () => string) {
  const builder = useBuilder();
  const { locale } = useI18n();
  return computed(() => {
    const node = builder.graph.nodes.find((n) => n.id === nodeId());
    if (!node) return undefined;
    if (node.type === 'start') {
      const rows = node.data.fields.map<PortRow>((f) => ({ name: f.name, kind: schemaKind(fieldSchema(f)), description: f.label || f.description, example: f.example }));
      return { node, color: COLORS.start, icon: 'start' as IconName, title: 'Start', subtitle: '', rows, unavailable: false, problems: builder.byNode.get(node.id) ?? [], badge: undefined, branch: undefined, pinned: false };
    }
    const entry = localizedEntry(builder.toolOf(node), locale.value);
    const color = nodeColor(node, entry);
    const unavailable = node.type === 'tool' && (!entry?.available);
    const label = typeof entry?.flowNode?.label === 'string' ? entry.flowNode.label : undefined;
    return {
      node,
      color,
      icon: iconFor(node, entry, unavailable),
      title: node.data.title || label || (node.type === 'tool' ? node.tool.name : node.id),
      subtitle: node.type === 'tool' ? node.tool.name : '',
      // a Human Input node's rows are its form's fields (what it passes on)
      rows: node.type === 'tool' ? rowsOf(outputSchemaOf(entry)) : node.type === 'input' ? rowsOf(node.data.form as JsonSchema) : [],
      unavailable,
      problems: builder.byNode.get(node.id) ?? [],
      badge: builder.badges[node.id],
      branch: node.type === 'condition' && builder.badges[node.id] === 'done' ? branchOf(builder.lastResults.get(node.id)) : undefined,
      pinned: !!node.data.pinned,
    };
  });
}
