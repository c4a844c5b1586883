import { randomBytes } from 'node:crypto';
import { FengYuError, MCP_OFF, parseWorkflowMcp, planToGraph, validateWorkflowDefinition, type WorkflowDefinition, WorkflowDraftSchema, type WorkflowVersionInfo } from '@fengyu/protocol';
import type { Clock } from '../clock';
import type { CatalogSnapshot } from '../tools/catalog';
import { checkErrorWorkflow } from './error-workflow';
import { sealGraphSecrets, sealPlanSecrets } from './secret-literals';
import type { TemplateStore } from './templates';
import { contentColumns, contentOf, type VersionRow, type WorkflowContent, type WorkflowRepository, type WorkflowRow, type WorkflowTrx } from './workflow.repository';

/**
 * Definitions, revisions and publication. Every write carries the revision it was based on
 * (optimistic concurrency: a stale one is a 409 with the current revision, and nothing
 * changes); every save is validated in full. Publishing freezes an immutable version; the draft
 * stays editable and the model keeps running the active version until the next publish.
 */

export interface WorkflowServiceDeps {
  repo: WorkflowRepository;
  clock: Clock;
  templates: TemplateStore;
  /** The owner's catalog without workflow tools (what a definition validates against). */
  baseCatalog: (owner: string) => Promise<CatalogSnapshot>;
  /** The owner's secret names: a publish refuses a `{{secrets.NAME}}` outside them (a draft may name one not yet added). */
  secretNames?: (owner: string) => ReadonlySet<string>;
}

/** Runs inside the delete transaction (schedules and webhooks cancel theirs here). */
export type DeleteHook = (trx: WorkflowTrx, owner: string, workflowId: string) => Promise<void>;

/** Told that which version of a workflow is active may have changed (a publish or a deletion). */
export type PublishedListener = (owner: string, workflowId: string) => void;

const newId = () => randomBytes(6).toString('hex');

/** The MCP setting of a save body, or `workflow_invalid` naming what is wrong with it. */
function mcpSetting(value: unknown) {
  const r = parseWorkflowMcp(value);
  if (!r.ok) throw new FengYuError('workflow_invalid', { count: r.problems.length }, r.problems);
  return r.mcp;
}

export class WorkflowService {
  private readonly deleteHooks: DeleteHook[] = [];
  private readonly publishedListeners = new Set<PublishedListener>();

  constructor(private readonly deps: WorkflowServiceDeps) {}

  /** Registers work done in the same transaction as a workflow's deletion. */
  onDelete(hook: DeleteHook): void {
    this.deleteHooks.push(hook);
  }

  /**
   * Registers a listener told when a workflow's active version may have changed: once just before
   * the publish or delete transaction commits (a read from then on waits for the commit) and once
   * after the transaction ended, committed or not. Returns the unsubscribe.
   */
  onPublishedChange(listener: PublishedListener): () => void {
    this.publishedListeners.add(listener);
    return () => this.publishedListeners.delete(listener);
  }

  private publishedChanged(owner: string, id: string): void {
    for (const l of this.publishedListeners) l(owner, id);
  }

  private now(): string {
    return new Date(this.deps.clock.now()).toISOString();
  }

  /** Validates a draft body in full; throws `workflow_invalid` with every problem. */
  async checked(owner: string, body: unknown, strict = false): Promise<WorkflowContent> {
    const catalog = await this.deps.baseCatalog(owner);
    const names = strict ? this.deps.secretNames?.(owner) : undefined;
    const result = validateWorkflowDefinition(body, { tool: (n) => catalog.get(n), allowUnavailableTools: !strict, allowMissingTools: !strict, ...(names ? { secretNames: names } : {}) });
    if (!result.ok) throw new FengYuError('workflow_invalid', { count: result.problems.length }, result.problems);
    const d = WorkflowDraftSchema.parse(body);
    const schemaOf = (tool: string) => catalog.get(tool)?.inputSchema;
    const graph = d.graph ? sealGraphSecrets(d.graph, schemaOf) : null;
    return { name: d.name, description: d.description, inputSchema: d.inputSchema, plan: sealPlanSecrets(result.plan, schemaOf), graph, layout: d.layout ?? null };
  }

  async row(owner: string, id: string): Promise<WorkflowRow> {
    const row = await this.deps.repo.get(owner, id);
    if (!row) throw new FengYuError('workflow_not_found', { id });
    return row;
  }

  async definition(row: WorkflowRow): Promise<WorkflowDefinition> {
    const c = contentOf(row);
    const active = row.published_version !== null ? await this.deps.repo.version(row.id, row.published_version) : undefined;
    return {
      id: row.id,
      name: c.name,
      description: c.description,
      inputSchema: c.inputSchema,
      plan: c.plan,
      graph: c.graph ?? { ...planToGraph(c.plan, c.inputSchema, c.layout) },
      graphReconstructed: !c.graph,
      ...(c.layout ? { layout: c.layout } : {}),
      state: row.published_version !== null ? 'published' : 'draft',
      revision: row.revision,
      publishedVersion: row.published_version,
      hasDraftChanges: !!active && active.content_hash !== row.content_hash,
      mcp: row.mcp ? JSON.parse(row.mcp) : MCP_OFF,
      errorWorkflowId: row.error_workflow_id ?? null,
      createdAt: row.created_at,
      updatedAt: row.updated_at,
    };
  }

  async get(owner: string, id: string): Promise<WorkflowDefinition> {
    return this.definition(await this.row(owner, id));
  }

  async list(owner: string): Promise<WorkflowDefinition[]> {
    return Promise.all((await this.deps.repo.list(owner)).map((r) => this.definition(r)));
  }

  /** Creates a draft from a body, or from a template (`{templateId, name?}`, in `locale`'s words when it has them). */
  async create(owner: string, body: Record<string, unknown>, locale?: string): Promise<WorkflowDefinition> {
    let source: unknown = body;
    if (typeof body.templateId === 'string') {
      const t = this.deps.templates.get(body.templateId, locale);
      if (!t) throw new FengYuError('workflow_template_not_found', { id: body.templateId });
      source = { name: typeof body.name === 'string' ? body.name : t.name, description: t.description, inputSchema: t.inputSchema, plan: t.plan, graph: t.graph };
    }
    const content = await this.checked(owner, source);
    const errorWorkflow = await checkErrorWorkflow(body.errorWorkflowId, undefined, this.errorLookup(owner));
    return this.insert(owner, content, errorWorkflow ? { error_workflow_id: errorWorkflow } : {});
  }

  /** What the error workflow check reads: this owner's workflows only (another owner's is unknown). */
  private errorLookup(owner: string) {
    return { row: (id: string) => this.deps.repo.get(owner, id), version: (id: string, v: number) => this.deps.repo.version(id, v) };
  }

  private async insert(owner: string, content: WorkflowContent, extra: Partial<WorkflowRow> = {}): Promise<WorkflowDefinition> {
    const now = this.now();
    const row: WorkflowRow = { id: newId(), owner, ...contentColumns(content), ...extra, revision: 1, published_version: null, created_at: now, updated_at: now };
    await this.deps.repo.insert(row);
    return this.definition(row);
  }

  private conflict(id: string, revision: number, current: number): FengYuError {
    return new FengYuError('workflow_revision_conflict', { id, revision, currentRevision: current }, { currentRevision: current });
  }

  /** Fails fast on a stale revision (the conditional update below still decides races). */
  private async at(owner: string, id: string, revision: number): Promise<WorkflowRow> {
    const row = await this.row(owner, id);
    if (row.revision !== revision) throw this.conflict(id, revision, row.revision);
    return row;
  }

  private async staleAfterRace(owner: string, id: string, revision: number): Promise<FengYuError> {
    const now = await this.deps.repo.get(owner, id);
    return now ? this.conflict(id, revision, now.revision) : new FengYuError('workflow_not_found', { id });
  }

  async update(owner: string, id: string, body: Record<string, unknown>, revision: number): Promise<WorkflowDefinition> {
    await this.at(owner, id, revision);
    const content = await this.checked(owner, body);
    const mcp = body.mcp === undefined ? {} : { mcp: JSON.stringify(mcpSetting(body.mcp)) };
    const errorWorkflow = await checkErrorWorkflow(body.errorWorkflowId, id, this.errorLookup(owner));
    const error = errorWorkflow === undefined ? {} : { error_workflow_id: errorWorkflow };
    const ok = await this.deps.repo.updateAt(owner, id, revision, { ...contentColumns(content), ...mcp, ...error, updated_at: this.now() });
    if (!ok) throw await this.staleAfterRace(owner, id, revision);
    return this.get(owner, id);
  }

  /**
   * Freezes the draft as a new immutable version and makes it active. Publishing requires every
   * tool to be available. A draft identical to the active version publishes nothing new.
   */
  async publish(owner: string, id: string, revision: number): Promise<WorkflowDefinition> {
    const row = await this.at(owner, id, revision);
    const content = contentOf(row);
    await this.checked(owner, { ...content, graph: content.graph ?? undefined, layout: content.layout ?? undefined }, true);
    const active = row.published_version !== null ? await this.deps.repo.version(id, row.published_version) : undefined;
    if (active && active.content_hash === row.content_hash) return this.definition(row);
    await this.deps.repo.transaction(async (trx) => {
      const version = (await this.deps.repo.lastVersion(id, trx)) + 1;
      const now = this.now();
      const cols = contentColumns(content);
      await this.deps.repo.insertVersion({ workflow_id: id, version, revision, ...cols, published_at: now }, trx);
      if (!(await this.deps.repo.updateAt(owner, id, revision, { published_version: version, updated_at: now }, trx))) throw await this.staleAfterRace(owner, id, revision);
      this.publishedChanged(owner, id);
    }).finally(() => this.publishedChanged(owner, id));
    return this.get(owner, id);
  }

  async versions(owner: string, id: string): Promise<WorkflowVersionInfo[]> {
    const row = await this.row(owner, id);
    return (await this.deps.repo.versions(id)).map((v) => ({
      version: v.version,
      revision: v.revision,
      name: v.name,
      description: v.description,
      publishedAt: v.published_at,
      active: v.version === row.published_version,
    }));
  }

  async versionRow(owner: string, id: string, version: number): Promise<VersionRow> {
    await this.row(owner, id);
    const v = await this.deps.repo.version(id, version);
    if (!v) throw new FengYuError('workflow_version_not_found', { id, version });
    return v;
  }

  /** Copies an old version into the draft; the active version stays until the next publish. */
  async restore(owner: string, id: string, version: number, revision: number): Promise<WorkflowDefinition> {
    const v = await this.versionRow(owner, id, version);
    await this.at(owner, id, revision);
    const cols = contentColumns(contentOf(v));
    if (!(await this.deps.repo.updateAt(owner, id, revision, { ...cols, updated_at: this.now() }))) throw await this.staleAfterRace(owner, id, revision);
    return this.get(owner, id);
  }

  /** "Save a copy": a new unpublished draft with the current draft's content. */
  async duplicate(owner: string, id: string): Promise<WorkflowDefinition> {
    const c = contentOf(await this.row(owner, id));
    return this.insert(owner, { ...c, name: `${c.name} (copy)`.slice(0, 200) });
  }

  /** Deletes the definition and its versions; delete hooks run in the same transaction. */
  async delete(owner: string, id: string): Promise<void> {
    await this.deps.repo.transaction(async (trx) => {
      if (!(await this.deps.repo.get(owner, id, trx))) throw new FengYuError('workflow_not_found', { id });
      for (const hook of this.deleteHooks) await hook(trx, owner, id);
      await this.deps.repo.delete(owner, id, trx);
      this.publishedChanged(owner, id);
    }).finally(() => this.publishedChanged(owner, id));
  }
}
