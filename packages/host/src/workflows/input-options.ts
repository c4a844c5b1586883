import { type EnumSource, enumSourceOf, FengYuError, getPath, inputContract, isFengYuError, type JsonSchema, localize, parsePath } from '@fengyu/protocol';
import type { PermissionGuard } from '../permissions/types';
import type { CatalogSnapshot } from '../tools/catalog';

/**
 * Options of an `"x-fengyu-enum"` input (a live dropdown): invoke the named list tool (read tools
 * only, through the permission guard) and map its items to `{value, label}`.
 */

export interface EnumOption {
  value: unknown;
  label: string;
}

export const MAX_OPTIONS = 1000;
const OPTIONS_TIMEOUT_MS = 30_000;

/** The list inside a tool result: `itemsPath`, else the result, else its `options` array, else its first array property. */
export function itemsOf(result: unknown, itemsPath?: string): unknown[] | undefined {
  if (itemsPath) {
    const at = getPath(result, parsePath(itemsPath.startsWith('.') || itemsPath.startsWith('[') ? itemsPath : `.${itemsPath}`));
    return Array.isArray(at) ? at : undefined;
  }
  if (Array.isArray(result)) return result;
  if (result && typeof result === 'object') {
    const options = (result as Record<string, unknown>).options;
    if (Array.isArray(options)) return options;
    return Object.values(result).find((v): v is unknown[] => Array.isArray(v));
  }
  return undefined;
}

/** Maps list items to options (pure). Primitive items are their own value and label. */
export function toOptions(items: readonly unknown[], src: Pick<EnumSource, 'valueField' | 'labelField'>): EnumOption[] {
  const out: EnumOption[] = [];
  for (const item of items.slice(0, MAX_OPTIONS)) {
    if (item === null || typeof item !== 'object') {
      if (item !== null && item !== undefined) out.push({ value: item, label: String(item) });
      continue;
    }
    const o = item as Record<string, unknown>;
    const value = src.valueField ? o[src.valueField] : (o.id ?? o.value);
    if (value === undefined) continue;
    const rawLabel = src.labelField ? o[src.labelField] : (o.label ?? o.name);
    out.push({ value, label: rawLabel === undefined || rawLabel === null ? String(value) : String(rawLabel) });
  }
  return out;
}

export interface OptionsRequest {
  owner: string;
  schema: JsonSchema;
  workflowId: string;
  field: string;
  catalog: CatalogSnapshot;
  guard: PermissionGuard;
  signal?: AbortSignal;
}

export async function listOptions(req: OptionsRequest): Promise<EnumOption[]> {
  const { field } = req;
  const prop = inputContract(req.schema).properties[field];
  if (!prop) throw new FengYuError('workflow_input_not_found', { id: req.workflowId, field });
  const src = enumSourceOf(prop);
  if (!src) throw new FengYuError('workflow_input_no_options', { field });
  const unusable = (reason: string) => new FengYuError('workflow_options_tool_unusable', { field, tool: src.tool, reason });
  const tool = req.catalog.get(src.tool);
  if (!tool) throw unusable('is not installed');
  if (!tool.available) throw unusable('is currently unavailable');
  if (tool.effect !== 'read') throw unusable(`is not a read tool (effect ${tool.effect})`);
  const args = src.arguments ?? {};
  const signal = AbortSignal.any([AbortSignal.timeout(OPTIONS_TIMEOUT_MS), ...(req.signal ? [req.signal] : [])]);
  const decision = await req.guard.check({ tool, arguments: args, owner: req.owner, permissionMode: 'ask', caller: 'workflow' }, signal);
  if (decision.decision !== 'allow') throw unusable(`is not allowed here (${decision.reason})`);
  let result: unknown;
  try {
    result = await tool.invoke(args, { signal, owner: req.owner, permissionMode: 'ask', grants: [] });
  } catch (err) {
    throw new FengYuError('workflow_options_failed', { field, reason: isFengYuError(err) ? localize(err.code, err.params) : err instanceof Error ? err.message : String(err) }, undefined, { cause: err });
  }
  if (result && typeof result === 'object' && (result as { success?: unknown }).success === false) {
    const e = (result as { error?: unknown }).error;
    throw new FengYuError('workflow_options_failed', { field, reason: typeof e === 'string' ? e : JSON.stringify(e ?? 'the tool reported failure') });
  }
  const items = itemsOf(result, src.itemsPath);
  if (!items) throw new FengYuError('workflow_options_failed', { field, reason: 'the tool returned no list' });
  return toOptions(items, src);
}
