import { fieldSchema, type JsonSchema } from '@fengyu/protocol';
import { computed } from 'vue';
import { useI18n } from 'vue-i18n';
import { COLORS, type IconName, iconOf, localizedEntry, nodeColor } from '../../flow/catalog-nodes';
import { alpha, darken } from '../../flow/color';
import { schemaExample, schemaKind, type ValueKind } from '../../flow/value-kinds';
import { outputSchemaOf } from '../../flow/variables';
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

export function useNodeLook(nodeId: () => string) {
  const builder = useBuilder();
  const { locale } = useI18n();
  return computed(() => {
    const node = builder.graph.nodes.find((n) => n.id === nodeId());
    if (!node) return undefined;
    if (node.type === 'start') {
      const rows = node.data.fields.map<PortRow>((f) => ({ name: f.name, kind: schemaKind(fieldSchema(f)), description: f.label || f.description, example: f.example }));
      return { node, color: COLORS.start, icon: 'start' as IconName, title: 'Start', subtitle: '', rows, unavailable: false, problems: builder.byNode.get(node.id) ?? [], badge: undefined, pinned: false };
    }
    const entry = localizedEntry(builder.toolOf(node), locale.value);
    const color = nodeColor(node, entry);
    const unavailable = node.type === 'tool' && (!entry?.available);
    const icon: IconName = node.type === 'model' ? 'model' : unavailable ? 'unavailable' : node.data.requiresApproval ? 'approval' : entry ? iconOf(entry) : 'tool';
    const label = typeof entry?.flowNode?.label === 'string' ? entry.flowNode.label : undefined;
    return {
      node,
      color,
      icon,
      title: node.data.title || label || (node.type === 'tool' ? node.tool.name : node.id),
      subtitle: node.type === 'tool' ? node.tool.name : '',
      rows: node.type === 'tool' ? rowsOf(outputSchemaOf(entry)) : [],
      unavailable,
      problems: builder.byNode.get(node.id) ?? [],
      badge: builder.badges[node.id],
      pinned: !!node.data.pinned,
    };
  });
}
