import { FengYuError, inputContract, isTerminal, type JsonSchema, stableHash, type ToolEffect, workflowToolName } from '@fengyu/protocol';
import type { AgentService } from '../agent/agent.service';
import type { RunRepository } from '../agent/run.repository';
import type { CatalogSnapshot, ToolCatalog } from '../tools/catalog';
import type { FileGrant, Tool, ToolContext, ToolSource } from '../tools/tool';
import { contentOf, type VersionRow, type WorkflowContent, type WorkflowRepository } from './workflow.repository';
import { problemsText, startWorkflowRun } from './workflow-run';

/**
 * The model's side of workflows: every published workflow is a catalog tool `run_workflow_<id>`
 * running its active version (frozen when the catalog snapshot was taken). A call runs the same
 * DAG runner with the outer call's permission mode and no gates (a step that would need approval
 * fails with the reason), against a catalog without workflow tools (no recursion), and returns
 * the run's result or rejects with its error. The run id is recorded as an audit event.
 */

/** Workflows may run for a while; the outer call's timeout is the plugin maximum. */
export const WORKFLOW_TOOL_TIMEOUT_SECONDS = 600;

const RANK: Record<ToolEffect, number> = { read: 0, write: 1, external: 2, command: 3 };

/**
 * Catalog snapshots that leave workflow tools out: the workflow source is not asked, so a
 * workflow never sees workflow tools (no recursion) and listing them never lists itself.
 */
export class BaseCatalog {
  constructor(private readonly catalog: ToolCatalog) {}

  snapshot(owner: string): Promise<CatalogSnapshot> {
    return this.catalog.snapshot(owner, 'workflow');
  }
}

export interface WorkflowToolDeps {
  repo: WorkflowRepository;
  base: BaseCatalog;
  agent: AgentService;
  runs: RunRepository;
}

/** The strongest effect among the steps; model steps count as read (their calls are guarded one by one). */
export function workflowEffect(content: WorkflowContent, catalog: CatalogSnapshot): ToolEffect {
  let effect: ToolEffect = 'read';
  for (const s of content.plan.steps) {
    if (!s.tool) continue;
    const e = catalog.get(s.tool)?.effect ?? 'write';
    if (RANK[e] > RANK[effect]) effect = e;
  }
  return effect;
}

/** The tool's schema: the input schema without the automatic shared-directory inputs. */
export function toolSchema(schema: JsonSchema): JsonSchema {
  const c = inputContract(schema);
  if (c.sharedDirectories.length === 0) return schema;
  const properties = Object.fromEntries(Object.entries(c.properties).filter(([n]) => !c.sharedDirectories.includes(n)));
  const required = c.required.filter((r) => !c.sharedDirectories.includes(r));
  const out: JsonSchema = { ...schema, properties };
  if (required.length) out.required = required;
  else delete out.required;
  return out;
}

/** File inputs of a tool call name one of the outer call's grants (by name or path). */
function fileGrants(content: WorkflowContent, args: Record<string, unknown>, outer: readonly FileGrant[]): FileGrant[] {
  const out: FileGrant[] = [];
  for (const name of inputContract(content.inputSchema).files) {
    const v = args[name];
    const g = typeof v === 'string' ? outer.find((x) => x.name === v || x.path === v) : outer.find((x) => x.name === name);
    if (g) out.push({ ...g, name });
  }
  return out;
}

export class WorkflowToolSource implements ToolSource {
  readonly kind = 'workflow' as const;

  constructor(private readonly deps: WorkflowToolDeps) {}

  /** An owner with no published workflow lists no tools at once; published ones are made from a snapshot (`list`). */
  listNow(owner: string): readonly Tool[] | undefined {
    return this.deps.repo.publishedNow?.(owner)?.length === 0 ? [] : undefined;
  }

  async list(owner: string): Promise<Tool[]> {
    const published = await this.deps.repo.published(owner);
    if (published.length === 0) return [];
    const catalog = await this.deps.base.snapshot(owner);
    return published.map(({ version }) => this.tool(owner, version, catalog));
  }

  /** What a frozen version always makes (its content, schema and revision), made once per version row. */
  private readonly frozen = new WeakMap<VersionRow, { content: WorkflowContent; inputSchema: JsonSchema; schemaRevision: string }>();

  private tool(owner: string, v: VersionRow, catalog: CatalogSnapshot): Tool {
    let made = this.frozen.get(v);
    if (!made) {
      const content = contentOf(v);
      const inputSchema = toolSchema(content.inputSchema);
      made = { content, inputSchema, schemaRevision: stableHash({ inputSchema, version: v.version }) };
      this.frozen.set(v, made);
    }
    const { content, inputSchema, schemaRevision } = made;
    // availability and effect follow the live catalog (a disabled plugin's tool), never the cache
    const available = content.plan.steps.every((s) => !s.tool || catalog.get(s.tool)?.available === true);
    return {
      name: workflowToolName(v.workflow_id),
      description: `Run the published workflow "${content.name}" (version ${v.version}).${content.description ? ` ${content.description}` : ''}`,
      inputSchema,
      effect: workflowEffect(content, catalog),
      source: 'workflow',
      id: `workflow:${v.workflow_id}`,
      schemaRevision,
      idempotent: false,
      available,
      origin: v.workflow_id,
      timeoutSeconds: WORKFLOW_TOOL_TIMEOUT_SECONDS,
      invoke: (args, ctx) => this.invoke(owner, v, content, args, ctx),
    };
  }

  private invoke(owner: string, v: VersionRow, content: WorkflowContent, args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> {
    return runWorkflowAsTool(this.deps, { owner, workflowId: v.workflow_id, version: v.version, content, name: workflowToolName(v.workflow_id) }, args, ctx);
  }
}

/** What a workflow tool call runs: one workflow content (a frozen version, or null for the saved draft). */
export interface WorkflowToolTarget {
  owner: string;
  workflowId: string;
  version: number | null;
  content: WorkflowContent;
  /** The tool name errors are reported under. */
  name: string;
}

/**
 * Runs a workflow for a tool call: the outer call's permission mode, no plan gate, the outer
 * approval carried in (inner gates pass), and the run's result returned (or its error thrown).
 * Otherwise an inner gate asks the person behind the call (the chat's approval card, or the
 * calling run's step gate) when there is one, and else waits in the inbox like any unattended
 * run's. The run id is recorded as an audit event.
 */
export async function runWorkflowAsTool(deps: Pick<WorkflowToolDeps, 'agent' | 'base' | 'runs'>, target: WorkflowToolTarget, args: Record<string, unknown>, ctx: ToolContext): Promise<unknown> {
  const { owner, workflowId: id, version, content, name } = target;
  if (ctx.signal.aborted) throw new FengYuError('tool_cancelled', { name });
  let runId: string;
  try {
    runId = await startWorkflowRun(
      { agent: deps.agent, baseCatalog: (o) => deps.base.snapshot(o) },
      {
        owner,
        workflowId: id,
        version,
        content,
        inputs: args ?? {},
        grants: fileGrants(content, args ?? {}, ctx.grants ?? []),
        config: { permissionMode: ctx.permissionMode, planApproval: false },
        noGates: true,
        preApproved: ctx.approved === true,
        // from a chat (or a model step), an inner gate asks the person behind the outer call
        ...(ctx.askApproval ? { outerApproval: ctx.askApproval } : {}),
        origin: 'workflow-tool',
      },
    );
  } catch (err) {
    throw new FengYuError('tool_failed', { name, reason: problemsText(err) }, (err as FengYuError).details, { cause: err });
  }
  ctx.emit?.('audit', { kind: 'workflow_run', workflowId: id, version, workflowRunId: runId });
  const onAbort = () => void deps.agent.cancel(owner, runId).catch(() => undefined);
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  if (ctx.signal.aborted) onAbort();
  try {
    const status = await deps.agent.waitForEnd(runId);
    const row = await deps.runs.get(runId);
    if (status === 'completed' && row) return row.result ? JSON.parse(row.result) : null;
    if (ctx.signal.aborted) throw new FengYuError('tool_cancelled', { name });
    const reason = row?.error ?? status;
    throw new FengYuError('workflow_run_failed', { id, runId, status: isTerminal(status) ? status : 'failed', reason });
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
  }
}
