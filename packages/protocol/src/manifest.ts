import { z } from 'zod';
import { LOCALES } from './i18n/index';

/**
 * The plugin manifest (`manifest.json` at the root of a `.fyp`). One zod
 * source gives the TypeScript type and the JSON Schema (`manifestJsonSchema()`); semantic checks
 * that need more than one field live in `manifest-check.ts` (`validateManifest`).
 */

/** Reverse-DNS, lower case, at least two segments: `fan.summer.excel`. */
export const PLUGIN_ID_PATTERN = /^[a-z][a-z0-9-]{0,62}(\.[a-z0-9][a-z0-9-]{0,62}){1,7}$/;
/** Semantic version 2.0.0 (no leading zeros; optional pre-release and build). */
export const SEMVER_PATTERN =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;
/** Tool names as models accept them (OpenAI / Anthropic function-name rules). */
export const TOOL_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
/** JSON-RPC method names of a worker; `$/…` is reserved for the protocol. */
export const METHOD_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_.-]{0,127}$/;
export const PLUGIN_EFFECTS = ['read', 'write', 'external'] as const;
export const TIMEOUT_BOUNDS = { min: 1, max: 600 } as const;

const JsonObjectSchema = z.record(z.string(), z.unknown());

export const RpcMethodSchema = z
  .object({
    description: z.string().max(4000).optional(),
    /** JSON Schema of the params object (`type: "object"`). */
    inputSchema: JsonObjectSchema,
    /** JSON Schema of the result; lets the canvas offer output fields. */
    outputSchema: JsonObjectSchema.optional(),
  })
  .strict();

export const AiToolSchema = z
  .object({
    name: z.string().regex(TOOL_NAME_PATTERN),
    description: z.string().min(1).max(4000),
    /** The `rpc.methods` entry the host calls. */
    method: z.string(),
    effect: z.enum(PLUGIN_EFFECTS),
    /** Clamped to [1, 600] at call time; default `backend.callTimeoutSeconds`. */
    timeoutSeconds: z.number().int().optional(),
    /** Declares that repeating a call is safe, so write/external tools may retry. */
    idempotent: z.boolean().optional(),
  })
  .strict();

export const FLOW_PORT_TYPES = ['text', 'number', 'boolean', 'object', 'list', 'file', 'any'] as const;

/** One declared input or output field of a canvas node; object and list fields nest. */
export interface FlowField {
  type: (typeof FLOW_PORT_TYPES)[number];
  label?: string;
  /** Per-field help shown in the node panel and the port tooltip. */
  help?: string;
  example?: unknown;
  /** Sub-fields of an `object` field (e.g. `confirmation.confirmationId`). */
  fields?: Record<string, FlowField>;
  /** Element shape of a `list` field. */
  items?: FlowField;
}

export const FlowFieldSchema: z.ZodType<FlowField> = z.lazy(() =>
  z
    .object({
      type: z.enum(FLOW_PORT_TYPES),
      label: z.string().max(200).optional(),
      help: z.string().max(4000).optional(),
      example: z.unknown().optional(),
      fields: z.record(z.string(), FlowFieldSchema).optional(),
      items: FlowFieldSchema.optional(),
    })
    .strict(),
);

export const FlowExampleSchema = z
  .object({
    title: z.string().max(200),
    arguments: JsonObjectSchema,
    result: z.unknown().optional(),
  })
  .strict();

/**
 * A canvas declaration for one aiTool: palette placement, node-level help, per-field help for
 * inputs (keys are input-schema properties), typed and nested outputs, examples.
 */
export const FlowNodeSchema = z
  .object({
    /** The aiTool this node runs (by its `name`). */
    tool: z.string(),
    label: z.string().min(1).max(200),
    category: z.string().max(100).optional(),
    icon: z.string().max(100).optional(),
    color: z.string().regex(/^#[0-9a-fA-F]{6}$/).optional(),
    /** Node-level help (Markdown). */
    help: z.string().max(20_000).optional(),
    inputs: z.record(z.string(), FlowFieldSchema).optional(),
    outputs: z.record(z.string(), FlowFieldSchema).optional(),
    examples: z.array(FlowExampleSchema).max(20).optional(),
  })
  .strict();

/** A field's label and help in one language. */
const FieldTextSchema = z.object({ label: z.string().min(1).max(200).optional(), help: z.string().max(4000).optional() }).strict();

/** One tool's texts in one language: the aiTool's description and its flow node's words. */
export const ToolTextSchema = z
  .object({
    description: z.string().min(1).max(4000).optional(),
    label: z.string().min(1).max(200).optional(),
    category: z.string().min(1).max(100).optional(),
    help: z.string().max(20_000).optional(),
    inputs: z.record(z.string(), FieldTextSchema).optional(),
    outputs: z.record(z.string(), FieldTextSchema).optional(),
  })
  .strict();

/** A plugin's texts in one language (anything left out is shown as declared). */
export const PluginTextsSchema = z
  .object({
    name: z.string().min(1).max(100).optional(),
    description: z.string().max(4000).optional(),
    /** Keyed by aiTool name. */
    tools: z.record(z.string(), ToolTextSchema).optional(),
  })
  .strict();

/**
 * `i18n`: translations of the manifest's user-facing texts, keyed by a UI language
 * (`"zh-CN"`); the declared texts are the fallback. English is the declared language.
 */
export const ManifestI18nSchema = z.partialRecord(z.enum(LOCALES), PluginTextsSchema);

export const ManifestSchema = z
  .object({
    id: z.string().regex(PLUGIN_ID_PATTERN),
    name: z.string().min(1).max(100),
    version: z.string().regex(SEMVER_PATTERN),
    description: z.string().max(4000).optional(),
    /** The worker's JS entry, relative to the package root; run with `node`. */
    worker: z.string().min(1),
    rpc: z.object({ methods: z.record(z.string(), RpcMethodSchema) }).strict(),
    aiTools: z.array(AiToolSchema).max(256).optional(),
    flowNodes: z.array(FlowNodeSchema).max(256).optional(),
    /** Plugin hooks file, relative to the root; conventionally `hooks/hooks.json`. */
    hooks: z.string().optional(),
    /** What the sandbox lets the worker do beyond its dirs and grants (shown to the user). */
    sandbox: z
      .object({
        /** Network access (e.g. an SMTP client); without it a sandboxed worker has none. */
        network: z.boolean().optional(),
      })
      .strict()
      .optional(),
    i18n: ManifestI18nSchema.optional(),
    author: z.string().max(200).optional(),
    homepage: z.string().max(500).optional(),
    license: z.string().max(100).optional(),
  })
  .strict();

export type RpcMethod = z.infer<typeof RpcMethodSchema>;
export type AiTool = z.infer<typeof AiToolSchema>;
export type FlowNode = z.infer<typeof FlowNodeSchema>;
export type FlowExample = z.infer<typeof FlowExampleSchema>;
export type PluginEffect = (typeof PLUGIN_EFFECTS)[number];
export type PluginManifest = z.infer<typeof ManifestSchema>;
export type PluginTexts = z.infer<typeof PluginTextsSchema>;
export type ToolTexts = z.infer<typeof ToolTextSchema>;

/** JSON Schema of `manifest.json`, derived from the zod source. */
export function manifestJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(ManifestSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}

/** `supportsAi` is true exactly when the manifest declares at least one aiTool. */
export function supportsAi(manifest: Pick<PluginManifest, 'aiTools'>): boolean {
  return (manifest.aiTools?.length ?? 0) > 0;
}

/** A declared timeout clamped to [1, 600]; undefined keeps the host default. */
export function clampTimeout(seconds: number | undefined): number | undefined {
  if (seconds === undefined || !Number.isFinite(seconds)) return undefined;
  return Math.min(TIMEOUT_BOUNDS.max, Math.max(TIMEOUT_BOUNDS.min, Math.round(seconds)));
}

/** Compares two semantic versions (pre-releases sort before releases); -1, 0 or 1. */
export function compareSemver(a: string, b: string): number {
  const pa = SEMVER_PATTERN.exec(a);
  const pb = SEMVER_PATTERN.exec(b);
  if (!pa || !pb) return a < b ? -1 : a > b ? 1 : 0;
  for (let i = 1; i <= 3; i++) {
    const d = Number(pa[i]) - Number(pb[i]);
    if (d !== 0) return d < 0 ? -1 : 1;
  }
  const ra = pa[4];
  const rb = pb[4];
  if (ra === rb) return 0;
  if (ra === undefined) return 1;
  if (rb === undefined) return -1;
  const xa = ra.split('.');
  const xb = rb.split('.');
  for (let i = 0; i < Math.max(xa.length, xb.length); i++) {
    const x = xa[i];
    const y = xb[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    const nx = /^\d+$/.test(x);
    const ny = /^\d+$/.test(y);
    if (nx && ny) return Number(x) < Number(y) ? -1 : 1;
    if (nx !== ny) return nx ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

/** True when `path` is a safe relative path inside a package (no `..`, not absolute, POSIX). */
export function isPackagePath(path: string): boolean {
  if (!path || path.length > 500 || path.includes('\0') || path.includes('\\')) return false;
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return false;
  const parts = path.split('/');
  return parts.every((p) => p !== ".." && p !== "");
}
