import { type AgentConfig, AgentConfigSchema, FengYuError, type AgentPlan, type PlanStep, type Problem, type RunStatus } from '@fengyu/protocol';
import type { CatalogSnapshot } from '../tools/catalog';
import type { FileGrant } from '../tools/tool';
import type { GateParking, OuterApproval } from './gates';
import { planRowText } from './run-text';
import type { ResolvedConfig } from './run-types';
import type { RunRow } from './run.repository';

/**
 * What starting a run takes: the request, its settings resolved against the defaults, and the row
 * its creating commit inserts. Pure: the service passes in the clock's time and the posture.
 */

export interface StartRequest {
  owner: string;
  goal?: string;
  workflow?: unknown;
  config?: unknown;
  inputs?: Record<string, unknown>;
  /** Declared inputs (a workflow's schema); default: the keys of `inputs`. */
  inputNames?: string[];
  fileInputNames?: string[];
  /** Inputs declared secret (`format: "password"`): kept in the vault, the marker everywhere else. */
  secretInputs?: string[];
  /** Raw `files` array of the request, resolved to grants by the files resolver. */
  files?: unknown;
  grants?: FileGrant[];
  origin?: string;
  workflowId?: string;
  workflowVersion?: number;
  /** Catalog to validate and run against (default: a fresh snapshot for the owner). */
  catalog?: CatalogSnapshot;
  /** Extra plan checks (workflows forbid nested workflow tools). */
  extraStepCheck?: (step: PlanStep) => Problem[];
  /** Invoked as a tool: never pauses (gates fail their step), no plan gate. */
  noGates?: boolean;
  /** With noGates: the outer call was approved, so inner gates pass (deny rules still deny). */
  preApproved?: boolean;
  /** A background task's slot, given back while a gate of the run waits in the inbox. */
  parking?: GateParking;
  /**
   * The run's id when chosen beforehand: a background task's run takes its task's id, so a
   * restart can tell a task whose run was never written (queued again) from one that began.
   */
  runId?: string;
  /** With noGates, from a chat: inner gates raise the chat's approval card. */
  outerApproval?: OuterApproval;
}

export type FilesResolver = (owner: string, runId: string, files: unknown) => Promise<{ grants: FileGrant[]; names: string[] }>;

/** What `prepare` checked and `launch` runs: the new run's id, settings, catalog and validated plan (none: the planner drafts it). */
export interface PreparedRun {
  runId: string;
  config: ResolvedConfig;
  catalog: CatalogSnapshot;
  plan: AgentPlan | undefined;
}

/** The request's `config` checked and completed with the defaults (`maxStepConcurrency`: the host's). */
export function resolveConfig(raw: unknown, req: StartRequest, maxStepConcurrency: number): ResolvedConfig {
  const parsed = AgentConfigSchema.safeParse(raw ?? {});
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => ({ code: 'plan_schema', field: `config.${i.path.join('.')}`, params: { path: `config.${i.path.join('.')}`, reason: i.message } }));
    throw new FengYuError('invalid_request', { reason: problems.map((p) => `${p.params.path}: ${p.params.reason}`).join('; ') }, problems);
  }
  const c: AgentConfig = parsed.data;
  return {
    permissionMode: c.permissionMode ?? 'ask',
    planApproval: req.noGates ? false : (c.planApproval ?? true),
    stepApproval: c.stepApproval ?? false,
    maxConcurrency: c.maxConcurrency ?? maxStepConcurrency,
    readOnly: c.capabilityMode === 'read-only',
    backend: c.backend,
    model: c.model,
    noGates: req.noGates ?? false,
    preApproved: req.preApproved ?? false,
    inputNames: req.inputNames ?? Object.keys(req.inputs ?? {}),
    fileInputNames: req.fileInputNames ?? [],
    ...(req.secretInputs?.length ? { secretInputs: req.secretInputs } : {}),
  };
}

/** A finished run's settings as a new run's request takes them (fork, rewind, retry). */
export function replayConfig(config: ResolvedConfig): AgentConfig {
  return { permissionMode: config.permissionMode, stepApproval: config.stepApproval, maxConcurrency: config.maxConcurrency, ...(config.readOnly ? { capabilityMode: 'read-only' } : {}), ...(config.backend ? { backend: config.backend } : {}), ...(config.model ? { model: config.model } : {}) };
}

/** What the row of a new run takes besides the request: its first status, kept inputs, grants, parent, time and sandbox posture. */
export interface NewRunFields {
  goal?: string;
  status: RunStatus;
  grants: FileGrant[];
  inputs: Record<string, unknown>;
  parentRunId?: string;
  /** ISO time of the creation. */
  now: string;
  /** The sandbox posture's JSON text. */
  sandbox: string;
}

/** The row of a new run, as its creating commit inserts it. */
export function newRunRow(req: StartRequest, p: PreparedRun, w: NewRunFields): RunRow {
  return {
    id: p.runId,
    owner: req.owner,
    goal: w.goal ?? null,
    status: w.status,
    plan: p.plan ? planRowText(p.plan, p.catalog) : null,
    config: JSON.stringify(p.config),
    inputs: req.inputs ? JSON.stringify(w.inputs) : '{}',
    files: w.grants.length ? JSON.stringify(w.grants) : '[]',
    gate: null,
    summary: null,
    error: null,
    result: null,
    parent_run_id: w.parentRunId ?? null,
    origin: req.origin ?? 'api',
    sandbox: w.sandbox,
    workflow_id: req.workflowId ?? null,
    workflow_version: req.workflowVersion ?? null,
    last_seq: 0,
    created_at: w.now,
    updated_at: w.now,
    finished_at: null,
  };
}

/** The requests of a batch (`POST /api/agent/batch`): 1..8 isolated runs, each read-only when asked. */
export function batchRequests(owner: string, runs: unknown, capabilityMode?: unknown): StartRequest[] {
  if (!Array.isArray(runs) || runs.length < 1 || runs.length > 8) throw new FengYuError('batch_size', { count: Array.isArray(runs) ? runs.length : 0 });
  if (capabilityMode !== undefined && capabilityMode !== 'read-only') throw new FengYuError('invalid_request', { reason: 'capabilityMode must be "read-only"' });
  return runs.map((r: Record<string, unknown>) => ({
    owner,
    goal: r?.goal as string | undefined,
    workflow: r?.workflow,
    config: { ...((r?.config as object) ?? {}), ...(capabilityMode ? { capabilityMode } : {}) },
    inputs: r?.inputs as Record<string, unknown> | undefined,
    files: r?.files,
    origin: 'batch',
  }));
}

/** Prepares every request of a batch before any starts: one `invalid_plan` listing each refused one by index. */
export async function prepareAll(reqs: StartRequest[], prepare: (req: StartRequest) => Promise<PreparedRun>): Promise<PreparedRun[]> {
  const prepared: PreparedRun[] = [];
  const problems: unknown[] = [];
  for (const [i, req] of reqs.entries()) {
    try {
      prepared.push(await prepare(req));
    } catch (err) {
      problems.push({ index: i, code: (err as FengYuError).code, details: (err as FengYuError).details });
    }
  }
  if (problems.length) throw new FengYuError('invalid_plan', { count: problems.length }, problems);
  return prepared;
}
