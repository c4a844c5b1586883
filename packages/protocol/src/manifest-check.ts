import type { z } from 'zod';
import type { Problem } from './errors';
import {
  isPackagePath,
  ManifestSchema,
  METHOD_NAME_PATTERN,
  PLUGIN_EFFECTS,
  type PluginManifest,
} from './manifest';
import { reservedToolFamily } from './reserved-tools';
import { isCompilableSchema } from './schema-check';

/**
 * `validateManifest`: every problem of a manifest at once, each with a stable code (messages in
 * `i18n/plugins.ts`). Structural problems come from the zod schema, mapped to codes by where
 * they occur; cross-field problems (methods, duplicates, paths, flow nodes) are checked on the
 * raw input as far as its shape allows, so one typo does not hide the rest.
 */

/** What the host knows beyond the manifest when it checks one. */
export interface ManifestCheckOptions {
  /**
   * Tool names already taken (built-ins, other installed plugins' aiTools); an aiTool using one
   * is refused with `manifest_tool_conflict`. Default none.
   */
  existingToolNames?: ReadonlySet<string> | readonly string[];
  /**
   * Files of the package (POSIX relative paths), when known: `worker` and `hooks` must name one
   * (`manifest_file_missing`; a leading `./` is ignored). Omitted: existence is not checked.
   */
  files?: ReadonlySet<string>;
}

/** The typed manifest, or every problem found (each code and field reported once). */
export type ManifestCheckResult =
  | {
      /** The manifest is valid. */
      ok: true;
      /** It, typed. */
      manifest: PluginManifest;
    }
  | {
      /** The manifest is refused. */
      ok: false;
      /** Every problem found (each code and field reported once). */
      problems: Problem[];
    };

/** A plain JSON object, as read from the raw manifest. */
type Obj = Record<string, unknown>;
/** True for a non-null, non-array object. */
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
/** A field path as text: `aiTools[0].name` (the first key bare, then `.key` and `[index]`). */
const fieldOf = (path: readonly PropertyKey[]) =>
  path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('');

/** The raw value at `path` inside the manifest, or undefined. */
function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const p of path) v = isObj(v) || Array.isArray(v) ? (v as Obj)[p as string] : undefined;
  return v;
}

/** The name of the aiTool at `index` for messages, or `#<index>` when it has none. */
function toolNameAt(root: unknown, index: unknown): string {
  const name = valueAt(root, ['aiTools', index as number, 'name']);
  return typeof name === 'string' ? name : `#${String(index)}`;
}

/**
 * Maps one zod issue to a coded problem: unknown keys, a non-object manifest, missing or
 * unknown effects, missing fields, bad id, version, tool name or timeout, and non-object
 * schemas each get their own code; anything else is `manifest_bad_field` with the reason.
 */
function issueProblem(root: unknown, issue: z.core.$ZodIssue): Problem[] {
  const path = issue.path;
  if (issue.code === 'unrecognized_keys') {
    return issue.keys.map((k) => ({ code: 'manifest_unknown_field', field: fieldOf([...path, k]), params: { field: fieldOf([...path, k]) } }));
  }
  const field = fieldOf(path) || '(root)';
  const value = valueAt(root, path);
  const [head, index, leaf] = path;
  if (path.length === 0) return [{ code: 'manifest_not_object', field, params: {} }];
  if (head === 'aiTools' && leaf === 'effect') {
    const tool = toolNameAt(root, index);
    if (value === undefined) return [{ code: 'manifest_tool_effect_missing', field, params: { tool } }];
    return [{ code: 'manifest_tool_effect_unknown', field, params: { tool, effect: value, allowed: PLUGIN_EFFECTS.join(', ') } }];
  }
  if (value === undefined) return [{ code: 'manifest_missing_field', field, params: { field } }];
  if (path.length === 1 && head === 'id') return [{ code: 'manifest_bad_id', field, params: { id: value } }];
  if (path.length === 1 && head === 'version') return [{ code: 'manifest_bad_version', field, params: { version: value } }];
  if (head === 'aiTools' && leaf === 'name') return [{ code: 'manifest_tool_name_bad', field, params: { name: value } }];
  if (head === 'aiTools' && leaf === 'timeoutSeconds') return [{ code: 'manifest_timeout_invalid', field, params: { tool: toolNameAt(root, index), value } }];
  if (head === 'rpc' && (path[3] === 'inputSchema' || path[3] === 'outputSchema') && path.length === 4) {
    return [{ code: 'manifest_schema_not_object', field, params: { field } }];
  }
  return [{ code: 'manifest_bad_field', field, params: { field, reason: issue.message } }];
}

/**
 * `worker` and `hooks` must be safe package paths (`manifest_bad_path`), the worker a `.js`,
 * `.mjs` or `.cjs` file (`manifest_worker_not_js`), and both present in the package when the
 * file list is known (`manifest_file_missing`).
 */
function pathProblems(m: Obj, files: ReadonlySet<string> | undefined): Problem[] {
  const out: Problem[] = [];
  for (const key of ['worker', 'hooks'] as const) {
    const p = m[key];
    if (typeof p !== 'string') continue;
    const norm = p.replace(/^(\.\/)+/, '');
    if (!isPackagePath(p)) out.push({ code: 'manifest_bad_path', field: key, params: { field: key, path: p } });
    else if (key === 'worker' && !/\.(m|c)?js$/.test(p)) out.push({ code: 'manifest_worker_not_js', field: key, params: { path: p } });
    else if (files && !files.has(norm)) out.push({ code: 'manifest_file_missing', field: key, params: { field: key, path: p } });
  }
  return out;
}

/** Method names match `METHOD_NAME_PATTERN`; their schemas are objects that compile. */
function methodProblems(m: Obj): Problem[] {
  const out: Problem[] = [];
  const methods = isObj(m.rpc) && isObj(m.rpc.methods) ? m.rpc.methods : {};
  for (const [name, def] of Object.entries(methods)) {
    const at = `rpc.methods.${name}`;
    if (!METHOD_NAME_PATTERN.test(name)) out.push({ code: 'manifest_bad_method_name', field: at, params: { method: name } });
    if (!isObj(def)) continue;
    for (const key of ['inputSchema', 'outputSchema'] as const) {
      const schema = def[key];
      if (!isObj(schema)) continue; // absence / wrong type is a structural problem
      if (key === 'inputSchema' && schema.type !== 'object') {
        out.push({ code: 'manifest_schema_not_object', field: `${at}.${key}`, params: { field: `${at}.${key}` } });
      } else if (!isCompilableSchema(schema)) {
        out.push({ code: 'manifest_schema_invalid', field: `${at}.${key}`, params: { field: `${at}.${key}` } });
      }
    }
  }
  return out;
}

/**
 * Each aiTool's method is declared; its name is not a reserved built-in family, not repeated,
 * and not already taken by another installed tool.
 */
function toolProblems(m: Obj, existing: ReadonlySet<string>): Problem[] {
  const out: Problem[] = [];
  const methods = isObj(m.rpc) && isObj(m.rpc.methods) ? m.rpc.methods : undefined;
  const tools = Array.isArray(m.aiTools) ? m.aiTools : [];
  const seen = new Set<string>();
  tools.forEach((t, i) => {
    if (!isObj(t)) return;
    const name = typeof t.name === 'string' ? t.name : undefined;
    if (typeof t.method === 'string' && methods && !Object.hasOwn(methods, t.method)) {
      out.push({ code: 'manifest_tool_method_missing', field: `aiTools[${i}].method`, params: { tool: name ?? `#${i}`, method: t.method } });
    }
    if (name === undefined) return;
    const family = reservedToolFamily(name);
    if (family) out.push({ code: 'manifest_tool_reserved', field: `aiTools[${i}].name`, params: { tool: name, family } });
    else if (seen.has(name)) out.push({ code: 'manifest_tool_duplicate', field: `aiTools[${i}].name`, params: { tool: name } });
    else if (existing.has(name)) out.push({ code: 'manifest_tool_conflict', field: `aiTools[${i}].name`, params: { tool: name } });
    seen.add(name);
  });
  return out;
}

/**
 * Each flow node names a declared aiTool, at most one node per tool, and its `inputs` keys are
 * properties of that tool's input schema.
 */
function flowNodeProblems(m: Obj): Problem[] {
  const out: Problem[] = [];
  const tools = new Map<string, Obj>();
  for (const t of Array.isArray(m.aiTools) ? m.aiTools : []) if (isObj(t) && typeof t.name === 'string') tools.set(t.name, t);
  const methods = isObj(m.rpc) && isObj(m.rpc.methods) ? m.rpc.methods : {};
  const seen = new Set<string>();
  (Array.isArray(m.flowNodes) ? m.flowNodes : []).forEach((n, i) => {
    if (!isObj(n) || typeof n.tool !== 'string') return;
    const tool = tools.get(n.tool);
    if (!tool) {
      out.push({ code: 'manifest_flow_tool_unknown', field: `flowNodes[${i}].tool`, params: { tool: n.tool } });
      return;
    }
    if (seen.has(n.tool)) out.push({ code: 'manifest_flow_duplicate', field: `flowNodes[${i}].tool`, params: { tool: n.tool } });
    seen.add(n.tool);
    const method = typeof tool.method === 'string' ? methods[tool.method] : undefined;
    const props = isObj(method) && isObj(method.inputSchema) && isObj(method.inputSchema.properties) ? method.inputSchema.properties : undefined;
    if (!props || !isObj(n.inputs)) return;
    for (const key of Object.keys(n.inputs)) {
      if (!Object.hasOwn(props, key)) out.push({ code: 'manifest_flow_field_unknown', field: `flowNodes[${i}].inputs.${key}`, params: { tool: n.tool, field: key } });
    }
  });
  return out;
}

/** Translations name declared tools and the fields their flow nodes declare. */
function i18nProblems(m: Obj): Problem[] {
  const out: Problem[] = [];
  if (!isObj(m.i18n)) return out;
  const tools = new Set<string>();
  for (const t of Array.isArray(m.aiTools) ? m.aiTools : []) if (isObj(t) && typeof t.name === 'string') tools.add(t.name);
  const nodes = new Map<string, Obj>();
  for (const n of Array.isArray(m.flowNodes) ? m.flowNodes : []) if (isObj(n) && typeof n.tool === 'string') nodes.set(n.tool, n);
  for (const [locale, texts] of Object.entries(m.i18n)) {
    if (!isObj(texts) || !isObj(texts.tools)) continue;
    for (const [tool, t] of Object.entries(texts.tools)) {
      const at = `i18n.${locale}.tools.${tool}`;
      if (!tools.has(tool)) {
        out.push({ code: 'manifest_i18n_tool_unknown', field: at, params: { locale, tool } });
        continue;
      }
      if (!isObj(t)) continue;
      const node = nodes.get(tool);
      for (const key of ['inputs', 'outputs'] as const) {
        if (!isObj(t[key])) continue;
        const declared = node && isObj(node[key]) ? node[key] : {};
        for (const field of Object.keys(t[key])) {
          if (!Object.hasOwn(declared, field)) out.push({ code: 'manifest_i18n_field_unknown', field: `${at}.${key}.${field}`, params: { locale, tool, field } });
        }
      }
    }
  }
  return out;
}

/**
 * Checks a parsed `manifest.json`; every problem is reported at once, structural and
 * cross-field, before anything is installed. Cross-field checks run whenever the input is an
 * object, even when its shape is broken.
 */
export function validateManifest(json: unknown, options: ManifestCheckOptions = {}): ManifestCheckResult {
  const parsed = ManifestSchema.safeParse(json);
  const problems: Problem[] = parsed.success ? [] : parsed.error.issues.flatMap((i) => issueProblem(json, i));
  if (isObj(json)) {
    const existing = new Set(options.existingToolNames ?? []);
    problems.push(...pathProblems(json, options.files), ...methodProblems(json), ...toolProblems(json, existing), ...flowNodeProblems(json), ...i18nProblems(json));
  }
  const unique = dedupe(problems);
  if (unique.length > 0 || !parsed.success) return { ok: false, problems: unique };
  return { ok: true, manifest: parsed.data };
}

/** Drops repeats: one problem per code and field. */
function dedupe(problems: Problem[]): Problem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.code}|${p.field}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
