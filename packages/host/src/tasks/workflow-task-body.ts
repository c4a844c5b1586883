import { FengYuError, type InputChecker, type InputContract, inputChecker, inputContract, REDACTED, secretInputNames } from '@fengyu/protocol';
import { dropKeptInputs, type InputVault, keptInputKey, revealKeptInputs, sealKeptInputs } from '../agent/secret-inputs';
import { checkKeptFiles } from '../files/kept-files';
import type { FileRepository } from '../files/file.repository';
import { errorText } from '../agent/run-text';
import type { AgentService } from '../agent/agent.service';
import type { RunRepository } from '../agent/run.repository';
import type { Db } from '../storage/database';
import type { CatalogSnapshot } from '../tools/catalog';
import { PublishedVersions } from '../workflows/published-versions';
import { contentOf } from '../workflows/workflow.repository';
import type { WorkflowService } from '../workflows/workflow.service';
import type { WorkflowRunner } from '../workflows/workflow-run';
import type { BodyHooks, BodyOutcome, TaskBody } from './task-common';
import { newTaskId } from './task-id';
import type { TaskFile, TaskRecord } from './task.store';
import type { SubmitTaskRequest } from './task-submitter';

/**
 * A task's body is an ordinary run of a published workflow's frozen version, by the same runner as
 * a manual run, with the task's permission mode and unattended: no plan review. A step gate (a
 * step marked requiresApproval, or a call the mode or a rule asks about) waits in the inbox: the
 * task goes `waiting` and gives its slot back, and after the answer the run goes on only once the
 * task holds a slot again. Nobody answering within 24 hours fails the step
 * (`gate_expired`). Under `ask`, write, external and command steps ask unless an allow rule covers
 * them; `full-access` runs every step; deny rules still deny in every mode.
 */

export interface WorkflowTaskBodyDeps {
  agent: AgentService;
  service: WorkflowService;
  runner: WorkflowRunner;
  runs: RunRepository;
  baseCatalog: (owner: string) => Promise<CatalogSnapshot>;
  /** The host's database: which version is published is then read with a prepared statement (SQLite). */
  db?: Db;
  /** The uploads a task's `files` refer to (owner-scoped); without it a task carries no files. */
  files?: Pick<FileRepository, 'get'>;
  /** Where a task keeps its secret inputs' values until its run starts (absent: the run sees the marker). */
  vault?: InputVault;
}

/** The run's summary and final result as text. */
export function runOutputText(summary: string | null, result: unknown): string {
  const parts: string[] = [];
  if (summary) parts.push(summary);
  if (result !== null && result !== undefined) parts.push(typeof result === 'string' ? result : JSON.stringify(result, null, 2));
  return parts.join('\n\n');
}

export class WorkflowTaskBody implements TaskBody {
  /** Which version of each workflow is active (kept on the host's own SQLite file until a publish or deletion). */
  private readonly versions: PublishedVersions;

  constructor(private readonly deps: WorkflowTaskBodyDeps) {
    this.versions = new PublishedVersions(deps.service, deps.db);
  }

  /** Input checks of published versions (immutable), by owner, workflow and version, with their shared-directory names. */
  private readonly schemas = new Map<string, { check: InputChecker; sharedDirectories: string[]; contract: InputContract; secret: string[] }>();

  /**
   * Before anything is queued: the workflow exists and is published, and the inputs bind to its
   * active version's schema (400 naming the field). The steps are checked against the tool
   * catalog when the body starts the run, as every run is: the version was checked when it was
   * published, and a tool gone since fails the task with the reason.
   */
  async prepare(req: SubmitTaskRequest): Promise<{ workflowVersion: number; inputs: Record<string, unknown>; files?: TaskFile[]; taskId?: string }> {
    const published = this.versions.peek(req.ownerId, req.workflowId) ?? (await this.versions.get(req.ownerId, req.workflowId));
    if (published === null) throw new FengYuError('workflow_not_published', { id: req.workflowId });
    const row = { published_version: published };
    const key = `${req.ownerId}\n${req.workflowId}@${row.published_version}`;
    let schema = this.schemas.get(key);
    if (!schema) {
      const v = await this.deps.service.versionRow(req.ownerId, req.workflowId, row.published_version);
      const inputSchema = contentOf(v).inputSchema;
      const contract = inputContract(inputSchema);
      schema = { check: inputChecker(inputSchema), sharedDirectories: contract.sharedDirectories, contract, secret: secretInputNames(inputSchema) };
      if (this.schemas.size >= 500) this.schemas.clear();
      this.schemas.set(key, schema);
    }
    // the files first: a missing upload is named as such (input_file_missing), not as a bad value
    const files = schema.contract.files.length > 0 || req.files !== undefined ? await this.checkFiles(req, schema.contract) : [];
    const bound = schema.check(req.inputs ?? {}, files.length ? [...schema.sharedDirectories, ...files.map((f) => f.name)] : schema.sharedDirectories);
    if (!bound.ok) {
      const fields = [...new Set(bound.problems.map((p) => p.field ?? '(root)'))].join(', ');
      throw new FengYuError('workflow_inputs_invalid', { fields }, bound.problems);
    }
    // a secret input's value is sealed under the task's id (chosen here) and written with the task's
    // row when it is admitted (a refused task leaves nothing); the row keeps the marker
    const taskId = req.taskId ?? newTaskId(Date.now());
    const { inputs, seal } = sealKeptInputs(this.deps.vault, req.ownerId, `task:${taskId}`, bound.inputs, schema.secret);
    return { workflowVersion: row.published_version, inputs, ...(files.length ? { files } : {}), ...(inputs !== bound.inputs ? { taskId } : {}), ...(seal ? { seal } : {}) };
  }

  private checkFiles(req: SubmitTaskRequest, contract: InputContract): Promise<TaskFile[]> {
    const repo = this.deps.files ?? { get: async () => undefined };
    return checkKeptFiles(repo, req.ownerId, req.files, contract);
  }

  async run(task: TaskRecord, hooks: BodyHooks): Promise<BodyOutcome> {
    if (hooks.slot.requested) return { state: 'cancelled', text: '' };
    let runId: string;
    // a secret input's value, kept by the task, or by the schedule or trigger that started it
    const scopes = [`task:${task.id}`, ...(task.scheduleId ? [`schedule:${task.scheduleId}`] : []), ...(task.triggerId ? [`trigger:${task.triggerId}`] : [])];
    const kept = Object.values(task.inputs).includes(REDACTED);
    try {
      // on a shared database the host that admitted the task (or made the schedule or trigger) may be another
      if (kept) await this.deps.vault?.refreshInternal(task.ownerId, scopes.map((s) => keptInputKey(s, '')));
      runId = await this.deps.runner.run(task.ownerId, task.workflowId, {
        version: task.workflowVersion,
        inputs: revealKeptInputs(this.deps.vault, task.ownerId, scopes, task.inputs),
        ...(task.files?.length ? { files: task.files } : {}),
        config: { permissionMode: task.permissionMode, planApproval: false },
        origin: task.kind === 'workflow' ? 'task' : task.kind,
        // the run takes the task's id: a restart finds no run under it when the body never began one
        runId: task.id,
        parking: { parked: (id) => hooks.park(id), resumed: () => hooks.unpark() },
      });
    } catch (err) {
      const e = err as FengYuError;
      return { state: 'failed', text: '', error: { code: e.code ?? 'internal', message: errorText(err) } };
    } finally {
      // the run keeps its own copy (`run:<id>/input/…`): the task's is not needed any more
      if (kept) await dropKeptInputs(this.deps.vault, task.ownerId, `task:${task.id}`).catch(() => undefined);
    }
    await hooks.onRun(runId);
    return this.follow({ ...task, runId }, hooks);
  }

  async cancel(task: TaskRecord): Promise<void> {
    if (task.runId) await this.deps.agent.cancel(task.ownerId, task.runId);
  }

  /** Waits for the task's run to end (a kill cancels it) and reports the task's outcome. */
  async follow(task: TaskRecord, hooks: BodyHooks): Promise<BodyOutcome> {
    const runId = task.runId as string;
    const detach = hooks.slot.attach(async () => {
      await this.deps.agent.cancel(task.ownerId, runId);
    });
    try {
      const status = await this.deps.agent.waitForEnd(runId);
      const row = await this.deps.runs.get(runId);
      const result = row?.result ? JSON.parse(row.result) : null;
      const text = runOutputText(row?.summary ?? null, result);
      if (status === 'completed') return { state: 'completed', text };
      if (status === 'cancelled') return { state: 'cancelled', text };
      if (status === 'interrupted') return { state: 'interrupted', text, error: { code: 'task_interrupted', message: row?.error ?? 'The host stopped while this task was running.' } };
      return { state: 'failed', text, error: { code: 'workflow_run_failed', message: row?.error ?? `The run ended ${status}.` } };
    } finally {
      detach();
    }
  }
}
