import { z } from 'zod';
import { LOCALES } from './i18n/index';

/**
 * The plugin manifest (`manifest.json` at the root of a `.fyp`). One zod
 * source gives the TypeScript type and the JSON Schema (`manifestJsonSchema()`); semantic checks
 * that need more than one field live in `manifest-check.ts` (`validateManifest`).
 */

/**
 * Plugin ids: reverse-DNS, lower case, 2..8 dot-separated segments of letters, digits and `-`
 * (each at most 63 characters, the first starting with a letter): `fan.summer.excel`.
 * A bad id is refused with `manifest_bad_id`.
 */
export const PLUGIN_ID_PATTERN = /^[a-z][a-z0-9-]{0,62}(\.[a-z0-9][a-z0-9-]{0,62}){1,7}$/;
/**
 * Semantic Versioning 2.0.0: `MAJOR.MINOR.PATCH`, no leading zeros, optional `-pre.release`
 * and `+build` (`1.2.0`, `2.0.0-rc.1`). A bad version is refused with `manifest_bad_version`.
 */
export const SEMVER_PATTERN =
  /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-((?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*)(?:\.(?:0|[1-9]\d*|\d*[a-zA-Z-][0-9a-zA-Z-]*))*))?(?:\+([0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*))?$/;
/**
 * aiTool names as models accept them (function-name rules of the common model APIs): a letter,
 * then up to 63 letters, digits, `_` or `-` (1..64 characters); `manifest_tool_name_bad`.
 */
export const TOOL_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
/**
 * JSON-RPC method names of a worker: a letter, then up to 127 letters, digits, `_`, `.` or `-`
 * (1..128 characters); `manifest_bad_method_name`. `$/…` is reserved for the protocol.
 */
export const METHOD_NAME_PATTERN = /^[A-Za-z][A-Za-z0-9_.-]{0,127}$/;
/**
 * The effects a plugin tool may declare (`command` is not one of them). Anything else is
 * refused with `manifest_tool_effect_unknown`; a missing effect with `manifest_tool_effect_missing`.
 */
export const PLUGIN_EFFECTS = ['read', 'write', 'external'] as const;
/** Bounds of an aiTool's `timeoutSeconds`, in seconds: 1..600 (see `clampTimeout`). */
export const TIMEOUT_BOUNDS = { min: 1, max: 600 } as const;

const JsonObjectSchema = z.record(z.string(), z.unknown());

/** One worker method in `rpc.methods` (keyed by method name). Unknown keys are refused. */
export const RpcMethodSchema = z
  .object({
    /** What the method does, at most 4000 characters. Optional. */
    description: z.string().max(4000).optional(),
    /**
     * JSON Schema of the params object (`type: "object"`); must compile
     * (`manifest_schema_not_object`, `manifest_schema_invalid`). Required.
     */
    inputSchema: JsonObjectSchema,
    /** JSON Schema of the result; lets the canvas offer output fields. Optional; must compile. */
    outputSchema: JsonObjectSchema.optional(),
  })
  .strict();

/**
 * A worker method offered as a tool to models, plans and the canvas. Unknown keys are refused.
 * Its input schema is the method's `inputSchema`.
 */
export const AiToolSchema = z
  .object({
    /**
     * The tool name; matches `TOOL_NAME_PATTERN`, unique within the manifest
     * (`manifest_tool_duplicate`), not a built-in family (`manifest_tool_reserved`) and not
     * another installed plugin's tool (`manifest_tool_conflict`).
     */
    name: z.string().regex(TOOL_NAME_PATTERN),
    /** What the tool does, for models and people: 1..4000 characters. */
    description: z.string().min(1).max(4000),
    /** The `rpc.methods` entry the host calls; must be declared there (`manifest_tool_method_missing`). */
    method: z.string(),
    /** What the tool can do: `read`, `write` or `external`. Required. */
    effect: z.enum(PLUGIN_EFFECTS),
    /**
     * Per-call timeout in seconds, an integer; clamped to [1, 600] at call time; default the
     * host's `backend.callTimeoutSeconds`.
     */
    timeoutSeconds: z.number().int().optional(),
    /** Declares that repeating a call is safe, so write/external tools may retry. Default false. */
    idempotent: z.boolean().optional(),
  })
  .strict();

/** The value types a canvas port may declare. */
export const FLOW_PORT_TYPES = ['text', 'number', 'boolean', 'object', 'list', 'file', 'any'] as const;

/** One declared input or output field of a canvas node; object and list fields nest. */
export interface FlowField {
  /** The field's value type (one of `FLOW_PORT_TYPES`). */
  type: (typeof FLOW_PORT_TYPES)[number];
  /** Display label, at most 200 characters. Optional. */
  label?: string;
  /** Per-field help shown in the node panel and the port tooltip; at most 4000 characters. */
  help?: string;
  /** A sample value, shown as a hint. */
  example?: unknown;
  /** Sub-fields of an `object` field (e.g. `confirmation.confirmationId`). */
  fields?: Record<string, FlowField>;
  /** Element shape of a `list` field. */
  items?: FlowField;
  /**
   * An input's manual widget beyond the type's own: the seed's "workbook analyze" — the author
   * picks a sample workbook, the builder analyzes it (`excel_analyze`, a read tool) and offers its
   * sheet names (`workbook-sheet`), or the first sheet's column names to pick one
   * (`workbook-column`) or several (`workbook-columns`). The value stays a plain name.
   */
  widget?: (typeof FLOW_WIDGETS)[number];
}

/** The manual widgets an input may declare (see `FlowField.widget`). */
export const FLOW_WIDGETS = ['workbook-sheet', 'workbook-column', 'workbook-columns'] as const;

/** The zod schema of `FlowField` (recursive; unknown keys refused). */
export const FlowFieldSchema: z.ZodType<FlowField> = z.lazy(() =>
  z
    .object({
      /** The value type, one of `FLOW_PORT_TYPES`. */
      type: z.enum(FLOW_PORT_TYPES),
      /** Display label, at most 200 characters. */
      label: z.string().max(200).optional(),
      /** Help text, at most 4000 characters. */
      help: z.string().max(4000).optional(),
      /** A sample value. */
      example: z.unknown().optional(),
      /** Sub-fields of an `object` field. */
      fields: z.record(z.string(), FlowFieldSchema).optional(),
      /** Element shape of a `list` field. */
      items: FlowFieldSchema.optional(),
      /** A manual widget, one of `FLOW_WIDGETS`. */
      widget: z.enum(FLOW_WIDGETS).optional(),
    })
    .strict(),
);

/** A worked example of a flow node: arguments and, optionally, the result they give. */
export const FlowExampleSchema = z
  .object({
    /** What the example shows, at most 200 characters. */
    title: z.string().max(200),
    /** The tool arguments of the example (a JSON object). */
    arguments: JsonObjectSchema,
    /** The result those arguments give. Optional. */
    result: z.unknown().optional(),
  })
  .strict();

/**
 * A canvas declaration for one aiTool: palette placement, node-level help, per-field help for
 * inputs (keys are input-schema properties), typed and nested outputs, examples.
 */
export const FlowNodeSchema = z
  .object({
    /**
     * The aiTool this node runs (by its `name`); must be declared (`manifest_flow_tool_unknown`),
     * at most one node per tool (`manifest_flow_duplicate`).
     */
    tool: z.string(),
    /** The node's title in the palette and on the canvas: 1..200 characters. */
    label: z.string().min(1).max(200),
    /** Palette group, at most 100 characters. Optional. */
    category: z.string().max(100).optional(),
    /** Icon, at most 100 characters. Optional. */
    icon: z.string().max(100).optional(),
    /** Accent color as `#rrggbb` hex. Optional. */
    color: z.string().regex(/^#[0-9a-fA-F]{6}$/).optional(),
    /** Node-level help (Markdown), at most 20000 characters. */
    help: z.string().max(20_000).optional(),
    /**
     * Per-input field declarations; each key must be a property of the tool's input schema
     * (`manifest_flow_field_unknown`).
     */
    inputs: z.record(z.string(), FlowFieldSchema).optional(),
    /** The result's fields, typed and nested, offered as output ports. */
    outputs: z.record(z.string(), FlowFieldSchema).optional(),
    /** Worked examples, at most 20. */
    examples: z.array(FlowExampleSchema).max(20).optional(),
  })
  .strict();

/**
 * A field's label (1..200 characters) and help (at most 4000) in one language; unknown keys
 * are refused.
 */
const FieldTextSchema = z.object({ label: z.string().min(1).max(200).optional(), help: z.string().max(4000).optional() }).strict();

/** One tool's texts in one language: the aiTool's description and its flow node's words. */
export const ToolTextSchema = z
  .object({
    /** The aiTool's description, 1..4000 characters. */
    description: z.string().min(1).max(4000).optional(),
    /** The flow node's label, 1..200 characters. */
    label: z.string().min(1).max(200).optional(),
    /** The flow node's palette group, 1..100 characters. */
    category: z.string().min(1).max(100).optional(),
    /** The flow node's help (Markdown), at most 20000 characters. */
    help: z.string().max(20_000).optional(),
    /** Texts of the flow node's input fields, by field key (declared fields only). */
    inputs: z.record(z.string(), FieldTextSchema).optional(),
    /** Texts of the flow node's output fields, by field key (declared fields only). */
    outputs: z.record(z.string(), FieldTextSchema).optional(),
  })
  .strict();

/** A plugin's texts in one language (anything left out is shown as declared). */
export const PluginTextsSchema = z
  .object({
    /** The plugin's name, 1..100 characters. */
    name: z.string().min(1).max(100).optional(),
    /** The plugin's description, at most 4000 characters. */
    description: z.string().max(4000).optional(),
    /** Keyed by aiTool name; each must be a declared aiTool (`manifest_i18n_tool_unknown`). */
    tools: z.record(z.string(), ToolTextSchema).optional(),
  })
  .strict();

/**
 * `i18n`: translations of the manifest's user-facing texts, keyed by a UI language
 * (`"zh-CN"`); the declared texts are the fallback. English is the declared language.
 */
export const ManifestI18nSchema = z.partialRecord(z.enum(LOCALES), PluginTextsSchema);

/**
 * `manifest.json` itself. Unknown keys are refused at every level (`manifest_unknown_field`);
 * a missing required field is `manifest_missing_field`.
 */
export const ManifestSchema = z
  .object({
    /** The plugin id; matches `PLUGIN_ID_PATTERN`. */
    id: z.string().regex(PLUGIN_ID_PATTERN),
    /** Display name, 1..100 characters. */
    name: z.string().min(1).max(100),
    /** The plugin's version; matches `SEMVER_PATTERN`. */
    version: z.string().regex(SEMVER_PATTERN),
    /** What the plugin does, at most 4000 characters. Optional. */
    description: z.string().max(4000).optional(),
    /**
     * The worker's JS entry (`.js`, `.mjs` or `.cjs`), a safe relative path inside the package
     * (see `isPackagePath`) that exists in it; run with `node`.
     */
    worker: z.string().min(1),
    /** The worker's JSON-RPC methods, keyed by name (see `METHOD_NAME_PATTERN`). */
    rpc: z
      .object({
        /** The methods, keyed by name (see `METHOD_NAME_PATTERN`). */
        methods: z.record(z.string(), RpcMethodSchema),
      })
      .strict(),
    /** The tools the plugin offers, at most 256. None: the plugin does not support AI. */
    aiTools: z.array(AiToolSchema).max(256).optional(),
    /** Canvas declarations for aiTools, at most 256. */
    flowNodes: z.array(FlowNodeSchema).max(256).optional(),
    /**
     * Plugin hooks file, a safe relative path that exists in the package; conventionally
     * `hooks/hooks.json`. Optional.
     */
    hooks: z.string().optional(),
    /**
     * What the sandbox lets the worker do beyond its dirs and grants (shown to the user).
     * Unknown keys are refused. Optional: omitted means nothing beyond them.
     */
    sandbox: z
      .object({
        /**
         * Network access (e.g. an SMTP client); without it a sandboxed worker has none.
         * Default false.
         */
        network: z.boolean().optional(),
      })
      .strict()
      .optional(),
    /** Translations of the user-facing texts (see `ManifestI18nSchema`). Optional. */
    i18n: ManifestI18nSchema.optional(),
    /** Who made the plugin, at most 200 characters. Optional. */
    author: z.string().max(200).optional(),
    /** The plugin's web page, at most 500 characters. Optional. */
    homepage: z.string().max(500).optional(),
    /** License name or SPDX expression, at most 100 characters. Optional. */
    license: z.string().max(100).optional(),
  })
  .strict();

/** One worker method (see `RpcMethodSchema`). */
export type RpcMethod = z.infer<typeof RpcMethodSchema>;
/** One plugin tool (see `AiToolSchema`). */
export type AiTool = z.infer<typeof AiToolSchema>;
/** One canvas declaration (see `FlowNodeSchema`). */
export type FlowNode = z.infer<typeof FlowNodeSchema>;
/** One worked example of a flow node (see `FlowExampleSchema`). */
export type FlowExample = z.infer<typeof FlowExampleSchema>;
/** `read`, `write` or `external`. */
export type PluginEffect = (typeof PLUGIN_EFFECTS)[number];
/** A structurally valid manifest (see `ManifestSchema`; `validateManifest` adds cross-field rules). */
export type PluginManifest = z.infer<typeof ManifestSchema>;
/** A plugin's texts in one language (see `PluginTextsSchema`). */
export type PluginTexts = z.infer<typeof PluginTextsSchema>;
/** One tool's texts in one language (see `ToolTextSchema`). */
export type ToolTexts = z.infer<typeof ToolTextSchema>;

/** JSON Schema of `manifest.json`, derived from the zod source. */
export function manifestJsonSchema(): Record<string, unknown> {
  return z.toJSONSchema(ManifestSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
}

/** `supportsAi` is true exactly when the manifest declares at least one aiTool. */
export function supportsAi(manifest: Pick<PluginManifest, 'aiTools'>): boolean {
  return (manifest.aiTools?.length ?? 0) > 0;
}

/**
 * A declared timeout in seconds, rounded and clamped to [1, 600]; undefined (or a non-finite
 * number) keeps the host default.
 */
export function clampTimeout(seconds: number | undefined): number | undefined {
  if (seconds === undefined || !Number.isFinite(seconds)) return undefined;
  return Math.min(TIMEOUT_BOUNDS.max, Math.max(TIMEOUT_BOUNDS.min, Math.round(seconds)));
}

/**
 * Compares two semantic versions by SemVer precedence: -1, 0 or 1. A pre-release sorts before
 * its release; numeric pre-release parts compare as numbers and before alphanumeric ones;
 * build metadata is ignored. Strings that are not versions compare as plain text.
 */
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

/**
 * True when `path` is a safe relative path inside a package: POSIX `/` separators only, 1..500
 * characters, no NUL, not absolute (no leading `/`, no drive letter), no `..` and no empty
 * segment.
 */
export function isPackagePath(path: string): boolean {
  if (!path || path.length > 500 || path.includes('\0') || path.includes('\\')) return false;
  if (path.startsWith('/') || /^[A-Za-z]:/.test(path)) return false;
  const parts = path.split('/');
  return parts.every((p) => p !== ".." && p !== "");
}
