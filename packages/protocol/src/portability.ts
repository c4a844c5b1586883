import { canonicalJson } from './catalog';
import type { Problem } from './errors';
import type { PlanStep } from './plan';
import { planSecretNames } from './secrets';

/**
 * Workflows in and out: the export document, the import answer and version diffs. Pure; the
 * host's `portability/` domain reads and writes definitions around these.
 */

/** The `format` every export document carries. */
export const WORKFLOW_EXPORT_FORMAT = 'fengyu.workflow';
/** The one `formatVersion` this host writes and reads; another is `import_format_unsupported`. */
export const WORKFLOW_EXPORT_VERSION = 1;

/** A tool an exported workflow calls, so the receiving host can say what it misses. */
export interface ExportedTool {
  /** The catalog name steps use. */
  name: string;
  /** Where the tool came from on the exporting host (`builtin`, `plugin`, `mcp`). */
  source: string;
  /** The plugin that provides it, for plugin tools. */
  pluginId?: string;
  /** That plugin's version on the exporting host. */
  pluginVersion?: string;
}

/**
 * A self-contained workflow document: no owner, no revision, no secret value and no uploaded
 * file; the secrets and tools it needs are listed by name.
 */
export interface WorkflowExport {
  /** Always `fengyu.workflow`. */
  format: typeof WORKFLOW_EXPORT_FORMAT;
  /** Always 1 for this host. */
  formatVersion: number;
  /** The workflow's display name. */
  name: string;
  /** What it does (may be empty). */
  description: string;
  /** Its input contract (an object JSON Schema). */
  inputSchema: Record<string, unknown>;
  /** The canvas document, as the builder saved it (or rebuilt from the plan). */
  graph: Record<string, unknown>;
  /** The AgentPlan it runs. */
  plan: {
    /** The plan's goal, when it has one. */
    goal?: string;
    /** Its steps, in plan order. */
    steps: PlanStep[];
  };
  /** The error workflow's id on the exporting host, when one was set. */
  errorWorkflowId?: string;
  /** When the document was written: ISO 8601 UTC. */
  exportedAt: string;
  /** Names of the secrets its steps reference (`{{secrets.NAME}}`), sorted; never values. */
  secrets: string[];
  /** The tools its steps call, sorted by name. */
  tools: ExportedTool[];
}

/** Something the imported draft needs that this host does not have. */
export interface ImportWarning {
  /** `import_tool_missing` or `import_secret_missing`. */
  code: 'import_tool_missing' | 'import_secret_missing';
  /** The missing tool's or secret's name. */
  name: string;
}

/** The answer to an import: the new draft and what it misses here. */
export interface ImportResult {
  /** The new workflow's id. */
  id: string;
  /** Its name (suffixed ` (2)`, ` (3)`… when the exported name was taken). */
  name: string;
  /** Always `draft`: an import never publishes. */
  state: 'draft';
  /** Missing tools and secrets; empty when everything it needs is here. */
  warnings: ImportWarning[];
}

/** What changed between two versions of a workflow (or a version and the draft). */
export interface WorkflowDiff {
  /** Steps by id (forEach body steps included). */
  steps: {
    /** Ids only in the newer side. */
    added: string[];
    /** Ids only in the older side. */
    removed: string[];
    /** Steps in both that differ. */
    changed: Array<{
      /** The step's id. */
      id: string;
      /** Its own fields that differ, sorted (`steps` when a forEach body gained, lost or reordered steps). */
      fields: string[];
    }>;
  };
  /** Inputs by name (properties of the input schema; a change of requiredness counts). */
  inputs: {
    /** Inputs only in the newer side. */
    added: string[];
    /** Inputs only in the older side. */
    removed: string[];
    /** Inputs in both whose schema or requiredness differs. */
    changed: string[];
  };
}

/** The parts of a definition a diff compares. */
export interface DiffSide {
  /** The plan's steps. */
  plan: {
    /** The top-level steps (forEach bodies are read from them). */
    steps: readonly PlanStep[];
  };
  /** The input schema (its `properties` and `required`). */
  inputSchema: Record<string, unknown>;
}

/** Every step of a plan, body steps of a forEach included, in plan order. */
export function allSteps(steps: readonly PlanStep[]): PlanStep[] {
  const out: PlanStep[] = [];
  for (const s of steps) {
    out.push(s);
    const body = (s as { steps?: unknown }).steps;
    if (Array.isArray(body)) out.push(...allSteps(body as PlanStep[]));
  }
  return out;
}

/** A step's own fields, without its body (body steps are compared as steps of their own). */
function ownFields(step: PlanStep): Record<string, unknown> {
  const { steps: _body, ...rest } = step as PlanStep & { steps?: unknown };
  return rest;
}

function byId(steps: readonly PlanStep[]): Map<string, PlanStep> {
  return new Map(allSteps(steps).map((s) => [s.id, s]));
}

/** The fields of two steps that differ (JSON equality, key order ignored), sorted. */
function changedFields(a: PlanStep, b: PlanStep): string[] {
  const fa = ownFields(a);
  const fb = ownFields(b);
  const keys = [...new Set([...Object.keys(fa), ...Object.keys(fb)])].sort();
  const bodyIds = (s: PlanStep) => canonicalJson(((s as { steps?: PlanStep[] }).steps ?? []).map((x) => x.id));
  const out = keys.filter((k) => canonicalJson(fa[k]) !== canonicalJson(fb[k]));
  // a loop whose body gained, lost or reordered steps changed its `steps` field
  if (bodyIds(a) !== bodyIds(b)) out.push('steps');
  return out.sort();
}

interface InputView {
  props: Record<string, unknown>;
  required: Set<string>;
}

function inputsOf(schema: Record<string, unknown>): InputView {
  const props = (schema.properties && typeof schema.properties === 'object' ? schema.properties : {}) as Record<string, unknown>;
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((r): r is string => typeof r === 'string') : []);
  return { props, required };
}

/** Added, removed and changed steps (with the changed fields) and inputs from `from` to `to`. */
export function diffWorkflows(from: DiffSide, to: DiffSide): WorkflowDiff {
  const a = byId(from.plan.steps);
  const b = byId(to.plan.steps);
  const added = [...b.keys()].filter((id) => !a.has(id));
  const removed = [...a.keys()].filter((id) => !b.has(id));
  const changed: Array<{ id: string; fields: string[] }> = [];
  for (const [id, sb] of b) {
    const sa = a.get(id);
    if (!sa) continue;
    const fields = changedFields(sa, sb);
    if (fields.length > 0) changed.push({ id, fields });
  }
  const ia = inputsOf(from.inputSchema);
  const ib = inputsOf(to.inputSchema);
  const names = (v: InputView) => Object.keys(v.props);
  return {
    steps: { added, removed, changed },
    inputs: {
      added: names(ib).filter((n) => !(n in ia.props)),
      removed: names(ia).filter((n) => !(n in ib.props)),
      changed: names(ib).filter((n) => n in ia.props && (canonicalJson(ia.props[n]) !== canonicalJson(ib.props[n]) || ia.required.has(n) !== ib.required.has(n))),
    },
  };
}

/** The secret names a plan's tool steps reference (forEach bodies included), sorted. */
export function secretNamesOf(steps: readonly PlanStep[]): string[] {
  return planSecretNames({ steps }).sort();
}

/** The tool names a plan's steps call (body steps included), sorted and unique. */
export function toolNamesOf(steps: readonly PlanStep[]): string[] {
  return [...new Set(allSteps(steps).flatMap((s) => (s.tool ? [s.tool] : [])))].sort();
}

/**
 * The envelope checks of an import document: format, version and the presence and types of
 * the parts a definition is made of. The definition itself is then validated as any save is.
 * An unknown `formatVersion` is reported alone (`import_format_unsupported`): nothing else of
 * such a document can be judged.
 */
export function importEnvelopeProblems(doc: unknown): Problem[] {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) return [{ code: 'import_not_object', field: '(root)' }];
  const d = doc as Record<string, unknown>;
  const out: Problem[] = [];
  if (d.format !== WORKFLOW_EXPORT_FORMAT) out.push({ code: 'import_format_invalid', field: 'format', params: { expected: WORKFLOW_EXPORT_FORMAT } });
  if (d.formatVersion !== WORKFLOW_EXPORT_VERSION) {
    return [{ code: 'import_format_unsupported', field: 'formatVersion', params: { version: String(d.formatVersion), supported: WORKFLOW_EXPORT_VERSION } }];
  }
  const kinds: Array<[string, 'string' | 'object', boolean]> = [
    ['name', 'string', true],
    ['description', 'string', false],
    ['inputSchema', 'object', false],
    ['graph', 'object', false],
    ['plan', 'object', true],
    ['errorWorkflowId', 'string', false],
  ];
  for (const [key, kind, required] of kinds) {
    const v = d[key];
    if (v === undefined || v === null) {
      if (required) out.push({ code: 'import_field_missing', field: key, params: { field: key } });
      continue;
    }
    const ok = kind === 'string' ? typeof v === 'string' : typeof v === 'object' && !Array.isArray(v);
    if (!ok) out.push({ code: 'import_field_type', field: key, params: { field: key, type: kind } });
  }
  return out;
}

/**
 * A name not in `taken`: the name itself, else `name (2)`, `name (3)`… (cut so the result stays
 * within `max` characters).
 */
export function freeName(name: string, taken: ReadonlySet<string>, max = 200): string {
  if (!taken.has(name)) return name;
  for (let n = 2; ; n++) {
    const suffix = ` (${n})`;
    const candidate = `${name.slice(0, max - suffix.length)}${suffix}`;
    if (!taken.has(candidate)) return candidate;
  }
}

/**
 * JSON text with keys sorted at every level and two-space indentation, ending in a newline:
 * the stable, diff-friendly form of an export file.
 */
export function stableJson(value: unknown): string {
  const sort = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(sort);
    if (v && typeof v === 'object') return Object.fromEntries(Object.keys(v).sort().map((k) => [k, sort((v as Record<string, unknown>)[k])]));
    return v;
  };
  return `${JSON.stringify(sort(value), null, 2)}\n`;
}

/**
 * The file name of a workflow's export document: the name as an ASCII slug, then the id
 * (`nightly-report.3f2a….fengyu.json`); the id keeps names of two workflows apart.
 */
export function exportFileName(name: string, workflowId: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .toLowerCase()
    .slice(0, 60);
  return `${slug ? `${slug}.` : ''}${workflowId}.fengyu.json`;
}
