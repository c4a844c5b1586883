/** The orchestrable tool catalog as clients see it. */

export type ToolEffect = 'read' | 'write' | 'external' | 'command';
export const TOOL_EFFECTS: readonly ToolEffect[] = ['read', 'write', 'external', 'command'];

export type ToolSourceKind = 'builtin' | 'plugin' | 'mcp' | 'workflow';

export type JsonSchema = Record<string, unknown>;

export interface CatalogEntry {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  outputSchema?: JsonSchema;
  effect: ToolEffect;
  source: ToolSourceKind;
  /** Stable identity: "pluginId:toolName", "builtin:web_fetch", "mcp:<server>:<tool>", "workflow:<id>". */
  id: string;
  /** Changes whenever the input or output schema changes. */
  schemaRevision: string;
  idempotent: boolean;
  available: boolean;
  /** Plugin id for plugin tools; server name for MCP tools. */
  origin?: string;
  /** Optional canvas declaration (plugins' flowNodes). */
  flowNode?: Record<string, unknown>;
}

/** A read tool, or a plugin tool declared idempotent, may retry. */
export function isRetrySafe(entry: Pick<CatalogEntry, 'effect' | 'idempotent' | 'source'>): boolean {
  return entry.effect === 'read' || (entry.source === 'plugin' && entry.idempotent === true);
}

/** A stable short hash of a JSON value (FNV-1a over canonical JSON), for schema revisions. */
export function stableHash(value: unknown): string {
  const text = canonicalJson(value);
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export const REDACTED = '[redacted]';

/** Top-level input properties a tool declares secret (`writeOnly`, `format: password`, `x-fengyu-secret`). */
export function secretFields(schema: JsonSchema | undefined): string[] {
  const props = (schema?.properties ?? {}) as Record<string, Record<string, unknown> | undefined>;
  return Object.entries(props)
    .filter(([, p]) => p && (p.writeOnly === true || p.format === 'password' || p['x-fengyu-secret'] === true))
    .map(([k]) => k);
}

/** A copy of `args` with the schema's secret fields replaced, for events, logs and API output. */
export function redactSecrets<T>(args: T, schema: JsonSchema | undefined): T {
  const fields = secretFields(schema);
  if (fields.length === 0 || !args || typeof args !== 'object' || Array.isArray(args)) return args;
  const out: Record<string, unknown> = { ...(args as Record<string, unknown>) };
  for (const f of fields) if (out[f] !== undefined && out[f] !== null) out[f] = REDACTED;
  return out as T;
}
