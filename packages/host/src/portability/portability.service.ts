import {
  diffWorkflows,
  type ExportedTool,
  FengYuError,
  freeName,
  type ImportResult,
  type ImportWarning,
  importEnvelopeProblems,
  planToGraph,
  secretNamesOf,
  toolNamesOf,
  WORKFLOW_EXPORT_FORMAT,
  WORKFLOW_EXPORT_VERSION,
  type WorkflowDiff,
  type WorkflowExport,
} from '@fengyu/protocol';
import type { Clock } from '../clock';
import type { CatalogSnapshot } from '../tools/catalog';
import { contentOf, type WorkflowContent } from '../workflows/workflow.repository';
import type { WorkflowService } from '../workflows/workflow.service';

/**
 * Workflows in and out: export documents, imports as drafts, and diffs between versions.
 * What leaves is the definition's content only — no owner, revision, secret value or uploaded
 * file; what comes in is validated as any save is and always lands as a new draft.
 */

export interface PortabilityDeps {
  workflows: WorkflowService;
  clock: Clock;
  /** The owner's catalog without workflow tools (what definitions validate against). */
  baseCatalog: (owner: string) => Promise<CatalogSnapshot>;
  /** The installed version of a plugin, when it is installed. */
  pluginVersion: (pluginId: string) => Promise<string | undefined>;
  /** The names of the owner's secrets; absent while no vault is assembled (then none exist). */
  secretNames?: (owner: string) => Promise<ReadonlySet<string>>;
}

/** One side of a diff: a published version number or the draft. */
export type DiffSideRef = number | 'draft';

export class PortabilityService {
  constructor(private readonly deps: PortabilityDeps) {}

  /** The export document of a workflow's current draft. */
  async export(owner: string, id: string): Promise<WorkflowExport> {
    const row = await this.deps.workflows.row(owner, id);
    const c = contentOf(row);
    const errorWorkflowId = row.error_workflow_id ?? undefined;
    return {
      format: WORKFLOW_EXPORT_FORMAT,
      formatVersion: WORKFLOW_EXPORT_VERSION,
      name: c.name,
      description: c.description,
      inputSchema: c.inputSchema as Record<string, unknown>,
      graph: c.graph ?? { ...planToGraph(c.plan, c.inputSchema, c.layout) },
      plan: c.plan,
      ...(errorWorkflowId ? { errorWorkflowId } : {}),
      exportedAt: new Date(this.deps.clock.now()).toISOString(),
      secrets: secretNamesOf(c.plan.steps),
      tools: await this.toolsOf(owner, c),
    };
  }

  private async toolsOf(owner: string, c: WorkflowContent): Promise<ExportedTool[]> {
    const catalog = await this.deps.baseCatalog(owner);
    const out: ExportedTool[] = [];
    for (const name of toolNamesOf(c.plan.steps)) {
      const tool = catalog.get(name);
      if (!tool) {
        out.push({ name, source: 'unknown' });
        continue;
      }
      const entry: ExportedTool = { name, source: tool.source };
      if (tool.source === 'plugin' && tool.origin) {
        entry.pluginId = tool.origin;
        const version = await this.deps.pluginVersion(tool.origin);
        if (version) entry.pluginVersion = version;
      }
      out.push(entry);
    }
    return out;
  }

  /**
   * Imports a document as a new draft of `owner`. Every problem of the document is listed in one
   * 400 (`import_invalid`); a taken name gets ` (2)`, ` (3)`…; tools and secrets missing here are
   * warnings, not errors (the draft keeps them and publishing refuses until they exist).
   */
  async import(owner: string, doc: unknown): Promise<ImportResult> {
    const envelope = importEnvelopeProblems(doc);
    const unsupported = envelope.find((p) => p.code === 'import_format_unsupported');
    if (unsupported) throw new FengYuError('import_format_unsupported', unsupported.params ?? {}, [unsupported]);
    if (envelope.length > 0) throw new FengYuError('import_invalid', { count: envelope.length }, envelope);
    const d = doc as WorkflowExport;
    const taken = new Set((await this.deps.workflows.list(owner)).map((w) => w.name));
    const name = freeName(d.name.trim() || d.name, taken);
    const body: Record<string, unknown> = {
      name,
      description: d.description ?? '',
      inputSchema: d.inputSchema ?? { type: 'object', properties: {} },
      plan: d.plan,
      ...(d.graph ? { graph: d.graph } : {}),
    };
    let created: { id: string; name: string };
    try {
      created = await this.deps.workflows.create(owner, body);
    } catch (e) {
      // the definition's own problems, reported as the import's
      if (e instanceof FengYuError && e.code === 'workflow_invalid') {
        const problems = Array.isArray(e.details) ? e.details : [];
        throw new FengYuError('import_invalid', { count: problems.length }, problems, { cause: e });
      }
      throw e;
    }
    return { id: created.id, name: created.name, state: 'draft', warnings: await this.warnings(owner, d) };
  }

  private async warnings(owner: string, d: WorkflowExport): Promise<ImportWarning[]> {
    const catalog = await this.deps.baseCatalog(owner);
    const out: ImportWarning[] = [];
    for (const name of toolNamesOf(d.plan.steps)) {
      const tool = catalog.get(name);
      if (!tool?.available) out.push({ code: 'import_tool_missing', name });
    }
    const have = (await this.deps.secretNames?.(owner)) ?? new Set<string>();
    for (const name of secretNamesOf(d.plan.steps)) if (!have.has(name)) out.push({ code: 'import_secret_missing', name });
    return out;
  }

  /** What changed from `from` to `to` (published versions, or `draft`). */
  async diff(owner: string, id: string, from: DiffSideRef, to: DiffSideRef): Promise<WorkflowDiff> {
    const [a, b] = await Promise.all([this.side(owner, id, from), this.side(owner, id, to)]);
    return diffWorkflows(a, b);
  }

  private async side(owner: string, id: string, ref: DiffSideRef): Promise<WorkflowContent> {
    if (ref === 'draft') return contentOf(await this.deps.workflows.row(owner, id));
    return contentOf(await this.deps.workflows.versionRow(owner, id, ref));
  }
}

/** Parses a diff side from a query value: a positive integer version or `draft`. */
export function parseDiffSide(side: 'from' | 'to', value: string | undefined, fallback: DiffSideRef | undefined): DiffSideRef {
  if (value === undefined || value === '') {
    if (fallback !== undefined) return fallback;
    throw new FengYuError('workflow_diff_side_invalid', { side, value: '' });
  }
  if (value === 'draft') return 'draft';
  if (/^[1-9][0-9]{0,8}$/.test(value)) return Number(value);
  throw new FengYuError('workflow_diff_side_invalid', { side, value: value.slice(0, 40) });
}
