/** The orchestrable tool catalog as clients see it. */

/**
 * What calling a tool can do to the world, which decides approvals and retries:
 * - `read`: only reads (safe to retry; the only effect allowed in read-only runs);
 * - `write`: changes local state (files, the host's own data);
 * - `external`: reaches outside the machine (network, mail, remote services);
 * - `command`: runs a process.
 * Under the `ask` permission mode every effect but `read` pauses for approval.
 */
export type ToolEffect = 'read' | 'write' | 'external' | 'command';
/** Every tool effect, for input checks and pickers. */
export const TOOL_EFFECTS: readonly ToolEffect[] = ['read', 'write', 'external', 'command'];

/**
 * Where a tool comes from: built into the host, a plugin's worker, an MCP server, or a saved
 * workflow exposed as a tool.
 */
export type ToolSourceKind = 'builtin' | 'plugin' | 'mcp' | 'workflow';

/** A JSON Schema document, kept as plain JSON (no validation of the schema itself here). */
export type JsonSchema = Record<string, unknown>;

/** One tool of the catalog: what plans, the canvas and models may call. */
export interface CatalogEntry {
  /**
   * The name plans use in `step.tool` and models call; unique within one catalog. Plugin tool
   * names match `TOOL_NAME_PATTERN`; published workflows are `run_workflow_<id>`.
   */
  name: string;
  /**
   * What the tool does, in words a model and a person can act on; models read it with the
   * input schema when they choose a tool.
   */
  description: string;
  /**
   * The JSON Schema of the tool's `arguments` (an object schema). Top-level properties marked
   * `writeOnly`, `format: password` or `x-fengyu-secret` are secret and redacted in output.
   */
  inputSchema: JsonSchema;
  /**
   * The JSON Schema of the tool's result, when declared; lets the canvas offer the result's
   * fields as output ports.
   */
  outputSchema?: JsonSchema;
  /**
   * What the tool can do (see `ToolEffect`); decides approvals under `ask`, retries and whether
   * a read-only run may use it.
   */
  effect: ToolEffect;
  /** Where the tool comes from (see `ToolSourceKind`). */
  source: ToolSourceKind;
  /**
   * Stable identity across renames of the display name: "pluginId:toolName",
   * "builtin:web_fetch", "mcp:<server>:<tool>", "workflow:<id>". Canvas nodes remember it.
   */
  id: string;
  /**
   * An opaque revision string (a `stableHash`) that changes whenever the input or output
   * schema changes; compare for equality only.
   */
  schemaRevision: string;
  /**
   * True when calling twice with the same arguments has the same effect as once. Makes a plugin
   * tool retry-safe; for other sources only `read` tools may retry.
   */
  idempotent: boolean;
  /**
   * False when the tool is listed but cannot be called now (e.g. its plugin or server is not
   * running); a plan using it is refused with `step_unavailable_tool`.
   */
  available: boolean;
  /**
   * Why the tool is unavailable, as a message code a client localizes (e.g.
   * `web_search_unconfigured`: no search endpoint is set); absent when available or unknown.
   */
  unavailableReason?: string;
  /** Plugin id for plugin tools; server name for MCP tools; absent for other sources. */
  origin?: string;
  /**
   * Optional canvas declaration (a plugin's `flowNodes` entry for this tool): palette
   * placement, help, typed inputs and outputs, examples.
   */
  flowNode?: Record<string, unknown>;
}

/**
 * Whether a step with this tool may have more than one attempt: true for a read tool, or for
 * a plugin tool declared idempotent; false otherwise.
 */
export function isRetrySafe(entry: Pick<CatalogEntry, 'effect' | 'idempotent' | 'source'>): boolean {
  return entry.effect === 'read' || (entry.source === 'plugin' && entry.idempotent === true);
}

/**
 * A stable short hash of a JSON value, for schema revisions: 32-bit FNV-1a over
 * `canonicalJson(value)`, as 8 lowercase hex digits. Equal JSON gives an equal hash whatever
 * the key order. Not a cryptographic hash.
 */
export function stableHash(value: unknown): string {
  const text = canonicalJson(value);
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h.toString(16).padStart(8, '0');
}

/**
 * JSON text with object keys sorted at every level and no whitespace, so equal values give
 * equal text. `undefined` (and other values JSON cannot hold) renders as `null`.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The text that replaces a secret argument's value in events, logs and API output. */
export const REDACTED = '[redacted]';

/**
 * The names of the top-level input properties a tool declares secret: `writeOnly: true`,
 * `format: "password"` or `x-fengyu-secret: true`. Nested properties are not inspected; an
 * absent schema has none.
 */
export function secretFields(schema: JsonSchema | undefined): string[] {
  const props = (schema?.properties ?? {}) as Record<string, Record<string, unknown> | undefined>;
  return Object.entries(props)
    .filter(([, p]) => p && (p.writeOnly === true || p.format === 'password' || p['x-fengyu-secret'] === true))
    .map(([k]) => k);
}

/** A value that only names where the secret comes from (`{{inputs.password}}`, `{{secrets.SMTP}}`). */
const WHOLE_REFERENCE = /^\{\{[^{}]+\}\}$/;

/**
 * What a stored workflow keeps of `args`: each secret field holding a value typed in (anything
 * but a whole `{{…}}` reference, null or the marker) becomes `REDACTED`, so no definition,
 * version or export holds a write-only value in clear. The same object when nothing changes.
 */
export function sealSecretLiterals(args: Record<string, unknown>, schema: JsonSchema | undefined): Record<string, unknown> {
  let out: Record<string, unknown> | undefined;
  for (const f of secretFields(schema)) {
    const v = args[f];
    if (v === undefined || v === null || v === REDACTED || (typeof v === 'string' && WHOLE_REFERENCE.test(v.trim()))) continue;
    out ??= { ...args };
    out[f] = REDACTED;
  }
  return out ?? args;
}

/**
 * The arguments a tool receives: a secret field still holding the marker (a value a workflow did
 * not keep) is left out, as if not given, so the marker is never taken for the secret itself.
 */
export function dropRedactedSecrets(args: Record<string, unknown>, schema: JsonSchema | undefined): Record<string, unknown> {
  const drop = secretFields(schema).filter((f) => args[f] === REDACTED);
  if (drop.length === 0) return args;
  const out = { ...args };
  for (const f of drop) delete out[f];
  return out;
}

/**
 * A shallow copy of `args` with each secret field's value replaced by `REDACTED`, for events,
 * logs and API output. Null and absent fields stay as they are; non-object `args` (and `args`
 * when the schema declares no secret) are returned unchanged. The input is never modified.
 */
export function redactSecrets<T>(args: T, schema: JsonSchema | undefined): T {
  const fields = secretFields(schema);
  if (fields.length === 0 || !args || typeof args !== 'object' || Array.isArray(args)) return args;
  const out: Record<string, unknown> = { ...(args as Record<string, unknown>) };
  for (const f of fields) if (out[f] !== undefined && out[f] !== null) out[f] = REDACTED;
  return out as T;
}
