import type { GateParking, OuterApproval } from '../agent/gates';
import { checkInputs, FengYuError, inputContract, localize, nestedWorkflowCheck, type Problem, renderGoal, sealInputs, secretInputNames, validateWorkflowDefinition } from '@fengyu/protocol';
import type { AgentService } from '../agent/agent.service';
import type { CatalogSnapshot } from '../tools/catalog';
import type { FileGrant } from '../tools/tool';
import { contentOf, type WorkflowContent } from './workflow.repository';
import type { WorkflowService } from './workflow.service';

/**
 * Starts a run of one workflow content (a draft or a frozen version): binds the inputs (every
 * missing or wrong field named before anything starts), adds the automatic shared directories,
 * re-validates against the live catalog (no unavailable tools, no nested workflow tools) and hands
 * the plan to the ordinary agent runner, recording the workflow id and version.
 */

export interface WorkflowRunDeps {
  agent: AgentService;
  /** The owner's catalog without workflow tools. */
  baseCatalog: (owner: string) => Promise<CatalogSnapshot>;
}

export interface WorkflowRunRequest {
  owner: string;
  workflowId: string;
  /** The frozen version that runs, or null for the current draft. */
  version: number | null;
  content: WorkflowContent;
  inputs?: unknown;
  /** The request's `files` (`{name, refs | nativePath | createSharedDirectory}`), passed through. */
  files?: unknown;
  grants?: FileGrant[];
  config?: Record<string, unknown>;
  noGates?: boolean;
  /** The outer tool call was approved: inner gates pass (see ToolContext.approved). */
  preApproved?: boolean;
  /** A background task's slot, given back while a gate waits in the inbox. */
  parking?: GateParking;
  /** From a chat: inner gates raise the chat's approval card. */
  outerApproval?: OuterApproval;
  origin: string;
  /** The run's id chosen beforehand (a background task's run takes its task's id). */
  runId?: string;
}

function fileEntries(files: unknown): Array<Record<string, unknown>> {
  if (files === undefined || files === null) return [];
  if (!Array.isArray(files)) throw new FengYuError('invalid_request', { reason: 'files must be an array' });
  return files.map((f) => (f && typeof f === 'object' ? (f as Record<string, unknown>) : {}));
}

function inputsError(problems: Problem[]): FengYuError {
  const fields = [...new Set(problems.map((p) => p.field ?? '(root)'))].join(', ');
  return new FengYuError('workflow_inputs_invalid', { fields }, problems);
}

/** Binds and validates without starting anything; returns what `agent.start` needs. */
export async function prepareWorkflowRun(deps: WorkflowRunDeps, req: WorkflowRunRequest) {
  const { content } = req;
  const contract = inputContract(content.inputSchema);
  const files = fileEntries(req.files);
  const names = new Set([...files.map((f) => f.name).filter((n): n is string => typeof n === 'string'), ...(req.grants ?? []).map((g) => g.name)]);
  for (const dir of contract.sharedDirectories) {
    if (!names.has(dir)) {
      files.push({ name: dir, createSharedDirectory: true });
      names.add(dir);
    }
  }
  const bound = checkInputs(content.inputSchema, req.inputs, [...names]);
  if (!bound.ok) throw inputsError(bound.problems);
  const catalog = await deps.baseCatalog(req.owner);
  const check = validateWorkflowDefinition(
    { ...content, graph: content.graph ?? undefined, layout: content.layout ?? undefined },
    { tool: (n) => catalog.get(n) },
  );
  if (!check.ok) throw new FengYuError('workflow_invalid', { count: check.problems.length }, check.problems);
  // a secret input (`format: "password"`) is never written into the goal (agent/secret-inputs.ts)
  const secretInputs = secretInputNames(content.inputSchema);
  const goal = renderGoal(check.plan.goal, sealInputs(bound.inputs, secretInputs));
  return {
    owner: req.owner,
    goal,
    workflow: { ...check.plan, ...(goal !== undefined ? { goal } : {}) },
    config: req.config ?? {},
    inputs: bound.inputs,
    inputNames: contract.values,
    ...(secretInputs.length ? { secretInputs } : {}),
    fileInputNames: [...contract.files, ...contract.sharedDirectories],
    ...(files.length > 0 ? { files } : {}),
    ...(req.grants?.length ? { grants: req.grants } : {}),
    origin: req.origin,
    workflowId: req.workflowId,
    ...(req.version !== null ? { workflowVersion: req.version } : {}),
    catalog,
    extraStepCheck: nestedWorkflowCheck,
    noGates: req.noGates ?? false,
    preApproved: req.preApproved ?? false,
    ...(req.parking ? { parking: req.parking } : {}),
    ...(req.runId ? { runId: req.runId } : {}),
    ...(req.outerApproval ? { outerApproval: req.outerApproval } : {}),
  };
}

export async function startWorkflowRun(deps: WorkflowRunDeps, req: WorkflowRunRequest): Promise<string> {
  return deps.agent.start(await prepareWorkflowRun(deps, req));
}

/** One line naming every problem (for a tool error the model reads). */
export function problemsText(err: unknown): string {
  const e = err as FengYuError;
  const details = Array.isArray(e.details) ? (e.details as Problem[]) : [];
  const head = localize(e.code, e.params ?? {});
  return details.length ? `${head} ${details.map((p) => localize(p.code, p.params ?? {})).join('; ')}` : head;
}

export interface RunSelection {
  inputs?: unknown;
  config?: Record<string, unknown>;
  files?: unknown;
  /** `draft` (default for manual runs), `published` (the active version) or a version number. */
  version?: number | 'draft' | 'published';
  origin?: string;
  noGates?: boolean;
  parking?: GateParking;
  /** The run's id chosen beforehand (a background task's run takes its task's id). */
  runId?: string;
}

/**
 * Picks what runs (draft, active version, or a version) and starts it. Manual runs use the draft
 * by default; schedules, webhooks and background tasks call `run` with `version: "published"`.
 */
export class WorkflowRunner {
  constructor(private readonly deps: WorkflowRunDeps & { service: WorkflowService }) {}

  async run(owner: string, id: string, sel: RunSelection): Promise<string> {
    const row = await this.deps.service.row(owner, id);
    let version: number | null = null;
    let content = contentOf(row);
    if (sel.version === 'published' || typeof sel.version === 'number') {
      const wanted = sel.version === 'published' ? row.published_version : sel.version;
      if (wanted === null) throw new FengYuError('workflow_not_published', { id });
      const v = await this.deps.service.versionRow(owner, id, wanted);
      version = v.version;
      content = contentOf(v);
    }
    return startWorkflowRun(this.deps, { owner, workflowId: id, version, content, inputs: sel.inputs, files: sel.files, config: sel.config, origin: sel.origin ?? 'workflow', noGates: sel.noGates, ...(sel.parking ? { parking: sel.parking } : {}), ...(sel.runId ? { runId: sel.runId } : {}) });
  }
}
