import { type ErrorWorkflowStart, FengYuError, type PermissionMode, PERMISSION_MODES } from '@fengyu/protocol';
import type { Logger } from 'pino';
import { type ErrorOutboxRepository, type OutboxRow, ERROR_WORKFLOW_ORIGIN } from '../agent/error-outbox.repository';
import type { RunRow } from '../agent/run.repository';
import { errorText } from '../agent/run-text';
import { type Clock, isoTime } from '../clock';
import type { CrashPoint } from '../config/crash-points';
import type { TaskSubmitter } from '../tasks/task-submitter';
import { FAILED_RUN_INPUT } from './error-workflow';

/**
 * The error-workflow dispatcher (docs/workflows.md "Failure handling"): submits the task of each
 * pending outbox row — the error workflow, started with `{failedRun}` — and settles the row. It
 * drains the outbox when a run failed and when the host starts, one drain at a time. Exactly once:
 * the task is submitted under the id its row was written with; a row whose task already exists (a
 * crash after the submission, before the row was settled) is settled without submitting again.
 * An error workflow that cannot be started (deleted, unpublished, its input changed, another
 * owner's) settles the row `failed` with the reason, logged; a full queue is tried again later.
 */

/** How `failedRun.trigger` names the way the failed run was started, by its origin. */
export type FailedRunTrigger = 'manual' | 'task' | 'schedule' | 'webhook' | 'tool' | 'mcp';

const TRIGGERS: Readonly<Record<string, FailedRunTrigger>> = {
  task: 'task',
  'workflow-schedule': 'schedule',
  'workflow-webhook': 'webhook',
  'workflow-tool': 'tool',
  mcp: 'mcp',
};

export function failedRunTrigger(origin: string | null | undefined): FailedRunTrigger {
  return (origin && Object.hasOwn(TRIGGERS, origin) ? TRIGGERS[origin] : undefined) ?? 'manual';
}

/** The document an error workflow is started with, as its input `failedRun`. */
export interface FailedRunDocument {
  runId: string;
  workflowId: string | null;
  workflowName: string;
  version: number | null;
  trigger: FailedRunTrigger;
  error: { code: string; message: string };
  failedStepId: string | null;
}

export function failedRunDocument(row: OutboxRow, run: Pick<RunRow, 'workflow_id' | 'workflow_version' | 'origin'> | undefined): FailedRunDocument {
  return {
    runId: row.failed_run_id,
    workflowId: run?.workflow_id ?? null,
    workflowName: row.workflow_name,
    version: run?.workflow_version ?? null,
    trigger: failedRunTrigger(run?.origin),
    error: { code: row.error_code, message: row.error_message },
    failedStepId: row.failed_step_id,
  };
}

/** The permission mode the failed run ran with (its error workflow runs with the same), when it names one. */
function modeOf(run: Pick<RunRow, 'config'> | undefined): PermissionMode | undefined {
  try {
    const mode = run ? (JSON.parse(run.config) as { permissionMode?: unknown }).permissionMode : undefined;
    return PERMISSION_MODES.includes(mode as PermissionMode) ? (mode as PermissionMode) : undefined;
  } catch {
    return undefined;
  }
}

export interface ErrorDispatchDeps {
  outbox: ErrorOutboxRepository;
  runs: { get(id: string): Promise<RunRow | undefined> };
  tasks: Pick<TaskSubmitter, 'submit' | 'get'>;
  clock: Clock;
  logger: Logger;
  /** Several hosts share the database: a row another dispatcher took is left to it for `CLAIM_STALE_MS`. */
  shared: boolean;
  /** Crash tests (docs/reliability.md): `error-workflow-due`, `error-workflow-submit`. */
  crashPoint?: CrashPoint;
}

/** Rows read per round of a drain. */
const BATCH = 50;
/** A row left pending (a full queue, storage trouble) is tried again after this long. */
const RETRY_MS = 2_000;
/** A row claimed by a dispatcher that stopped answering is taken over after this long (shared database). */
const CLAIM_STALE_MS = 60_000;
/** A row that keeps failing for a passing reason is given up after this many attempts. */
const MAX_ATTEMPTS = 30;

type Outcome = 'settled' | 'later' | 'stopped';

export class ErrorWorkflowDispatcher {
  private draining?: Promise<void>;
  private again = false;
  private retry?: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly deps: ErrorDispatchDeps) {}

  /** Drains the outbox now (a run failed, or the host started); a drain under way drains again after. */
  nudge(): void {
    if (this.closed) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.drain()
      .catch((err) => {
        this.deps.logger.warn({ err }, 'error workflow outbox: drain failed; trying again');
        this.later();
      })
      .finally(() => {
        this.draining = undefined;
        if (this.again) {
          this.again = false;
          this.nudge();
        }
      });
  }

  /** The drain under way (tests, shutdown). */
  idle(): Promise<void> {
    return this.draining ?? Promise.resolve();
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    await this.idle();
  }

  private later(): void {
    if (this.closed || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      this.nudge();
    }, RETRY_MS);
    this.retry.unref();
  }

  private async drain(): Promise<void> {
    const seen = new Set<string>();
    for (;;) {
      const rows = (await this.deps.outbox.pending(BATCH)).filter((r) => !seen.has(r.failed_run_id));
      for (const row of rows) {
        seen.add(row.failed_run_id);
        const outcome = await this.dispatch(row);
        if (outcome === 'stopped') return;
        if (outcome === 'later') this.later();
      }
      if (rows.length === 0) return;
    }
  }

  private async dispatch(row: OutboxRow): Promise<Outcome> {
    const { outbox, clock } = this.deps;
    const id = row.failed_run_id;
    const now = clock.now();
    // one host: its drains are one at a time, a claim left by a crash is its own
    if (!(await outbox.claim(id, now, this.deps.shared ? now - CLAIM_STALE_MS : now + 1))) return 'settled';
    if (await this.deps.tasks.get(row.owner, row.task_id)) return this.settle(row, 'submitted');
    this.deps.crashPoint?.('error-workflow-due');
    const run = await this.deps.runs.get(id);
    const mode = modeOf(run);
    try {
      const result = await this.deps.tasks.submit({
        taskId: row.task_id,
        ownerId: row.owner,
        workflowId: row.error_workflow_id,
        inputs: { [FAILED_RUN_INPUT]: failedRunDocument(row, run) },
        priority: 'normal',
        kind: ERROR_WORKFLOW_ORIGIN,
        ...(mode ? { permissionMode: mode } : {}),
      });
      if (!result.ok) return this.pass(row, { code: 'task_capacity', message: `the task queue is full (${result.refusal.capacityScope})` });
    } catch (err) {
      return this.refused(row, err);
    }
    this.deps.crashPoint?.('error-workflow-submit');
    return this.settle(row, 'submitted');
  }

  /** A submission that threw: the error workflow cannot start (settled `failed`), or a passing trouble. */
  private async refused(row: OutboxRow, err: unknown): Promise<Outcome> {
    if (err instanceof FengYuError && err.code === 'task_host_stopping') {
      await this.deps.outbox.release(row.failed_run_id).catch(() => undefined);
      return 'stopped';
    }
    // a task admitted under the row's id by another dispatcher (a shared database) is the one
    if (await this.deps.tasks.get(row.owner, row.task_id).catch(() => undefined)) return this.settle(row, 'submitted');
    const reason = { code: (err as FengYuError).code ?? 'internal', message: errorText(err) };
    if (err instanceof FengYuError) return this.settle(row, 'failed', reason);
    return this.pass(row, reason);
  }

  /** Tried again later, up to `MAX_ATTEMPTS`. */
  private async pass(row: OutboxRow, reason: { code: string; message: string }): Promise<Outcome> {
    if (row.attempts + 1 >= MAX_ATTEMPTS) return this.settle(row, 'failed', reason);
    this.deps.logger.warn({ runId: row.failed_run_id, reason }, 'error workflow not submitted yet; trying again');
    await this.deps.outbox.release(row.failed_run_id);
    return 'later';
  }

  private async settle(row: OutboxRow, state: 'submitted' | 'failed', reason?: { code: string; message: string }): Promise<Outcome> {
    if (reason) this.deps.logger.warn({ runId: row.failed_run_id, errorWorkflowId: row.error_workflow_id, reason }, 'the error workflow of a failed run could not be started');
    await this.deps.outbox.settle(row.failed_run_id, state, isoTime(this.deps.clock.now()), reason);
    return 'settled';
  }
}

/** The error workflows' outbox and dispatcher of a host. */
export interface ErrorWorkflows {
  outbox: ErrorOutboxRepository;
  dispatcher: ErrorWorkflowDispatcher;
}

/** What the run detail shows of a run's error workflow (undefined: its failure started none). */
export async function errorWorkflowStart(errorWorkflows: ErrorWorkflows | undefined, tasks: Pick<TaskSubmitter, 'get'> | undefined, run: Pick<RunRow, 'id' | 'owner'>): Promise<ErrorWorkflowStart | undefined> {
  const row = await errorWorkflows?.outbox.forRun(run.id);
  if (!row || row.owner !== run.owner) return undefined;
  const base: ErrorWorkflowStart = { workflowId: row.error_workflow_id, state: row.state, taskId: row.task_id };
  if (row.state === 'failed') return { ...base, error: { code: row.failure_code ?? 'internal', message: row.failure_message ?? '' } };
  const task = row.state === 'submitted' ? await tasks?.get(run.owner, row.task_id) : undefined;
  return task?.runId ? { ...base, runId: task.runId } : base;
}
