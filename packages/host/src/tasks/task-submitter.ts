import type { PermissionMode, TaskKind, TaskPriority, TaskSnapshot, TaskState } from '@fengyu/protocol';
import type { KeptSeal } from '../secrets/vault';

/** One file input's uploads, by FileRef id. */
export interface TaskFile {
  name: string;
  refs: string[];
}

export type { TaskKind, TaskPriority, TaskSnapshot, TaskState };

/**
 * The seam between background-task producers (the REST route, the task tools, schedules,
 * webhooks) and the task executor. Producers depend on this interface only, so the queue can move
 * to another store (a shared database with a job engine) without touching them.
 */

export type CapacityScope = 'owner' | 'global' | 'owner-priority' | 'global-priority';

export interface SubmitTaskRequest {
  ownerId: string;
  workflowId: string;
  inputs?: Record<string, unknown>;
  /**
   * Uploads for the workflow's file inputs (`[{name, refs: [FileRef id]}]`), granted to the run;
   * checked at submission (the owner's files, declared file inputs, every required one given).
   */
  files?: unknown;
  priority: TaskPriority;
  kind: TaskKind;
  /** Defaults to the owner's configured mode when absent. */
  permissionMode?: PermissionMode;
  scheduleId?: string;
  triggerId?: string;
  /**
   * The task's id, chosen by its producer before submitting (an error workflow's, kept with its
   * outbox row, so that a producer that crashed after submitting finds the task under it and never
   * submits it twice). Absent: a new id.
   */
  taskId?: string;
}

/** Why a submission was refused for capacity: the limit that refused it. */
export interface CapacityRefusal {
  capacityScope: CapacityScope;
  /** The reservation that refused (batch, or batch + normal), when a reservation did. */
  capacityPriority?: 'batch' | 'normal';
  retryable: true;
  retryAfterSeconds: 1;
}

export type SubmitResult = { ok: true; task: TaskSnapshot } | { ok: false; refusal: CapacityRefusal };

export interface TaskSubmitter {
  /**
   * Validates the request (unknown workflow 404, draft 409, inputs 400 naming the field; thrown as
   * FengYuError before anything is queued), then admits the task or refuses it for capacity.
   * The task is persisted before this resolves.
   */
  submit(req: SubmitTaskRequest): Promise<SubmitResult>;
  /** The owner's task, or undefined for an unknown id or another owner's task. */
  get(ownerId: string, taskId: string): Promise<TaskSnapshot | undefined>;
  /** Called after a task reaches a terminal state (persisted first). Returns an unsubscribe. */
  onFinished(listener: (task: TaskSnapshot) => void): () => void;
}

/** A submission checked and prepared (the version that will run, the bound inputs), not yet admitted. */
export interface PreparedSubmission {
  readonly req: SubmitTaskRequest;
  readonly workflowVersion: number;
  readonly inputs: Record<string, unknown>;
  /** The request's files, checked and normalized (absent: none). */
  readonly files?: TaskFile[];
  /** The secret input values the task keeps (`task:<id>/input/<name>`, `req.taskId` set): written with the task's row, only when it is admitted. */
  readonly seal?: KeptSeal;
}

/** A task admitted inside a producer's transaction: nothing runs until that transaction commits. */
export interface AdmittedWithin {
  ok: true;
  /** The admitted task's id and state at admission (the full view is `get`'s, once committed). */
  task: Pick<TaskSnapshot, 'id' | 'state' | 'queued'>;
  /** The producer's transaction committed (the task row with it): the task may start. */
  committed(): void;
  /** The producer's transaction rolled back: the admission is undone, nothing ran. */
  rolledBack(): void;
}

/**
 * Admission inside a producer's own synchronous transaction on the host's SQLite connection, so
 * the producer's rows (a webhook's claim and audit row) and the task row commit together.
 */
export interface SubmitWithin {
  /** Whether `admitWithin` can be used now (SQLite, host not stopping). */
  canSubmitWithin(): boolean;
  /** Checks and prepares (throws a FengYuError before anything is written). */
  prepareSubmit(req: SubmitTaskRequest): Promise<PreparedSubmission>;
  /**
   * The same for a caller that has already bound and checked `req.inputs` against the workflow's
   * active version `workflowVersion`, as the body's own preparation would (a trust boundary that
   * checks before any side effect): the request's shared fields are still checked, the inputs are
   * taken as they are (the caller sealed its secret ones under `req.taskId`: `seal`).
   */
  prepareChecked?(req: SubmitTaskRequest, workflowVersion: number, seal?: KeptSeal): PreparedSubmission;
  /** Synchronous, inside the caller's open transaction: admits (writing the task row and its sealed values in it) or refuses (writing nothing). */
  admitWithin(prepared: PreparedSubmission): AdmittedWithin | { ok: false; refusal: CapacityRefusal };
  /**
   * Registers a writer run synchronously inside the commit that records a task's end (its rows
   * commit with the end, or not at all); it must not throw. A task whose end is written by
   * another path is not seen by it, so the producer keeps its own follow-up for those.
   */
  onEndWithin?(writer: EndWriter): () => void;
}

/** What an end writer learns of the ending task. */
export interface EndedTask {
  id: string;
  kind: TaskKind;
  state: TaskState;
  finishedMs: number;
  error?: { code: string; message: string };
}
/** Runs synchronously inside the commit that records a task's end (it must not throw). */
export type EndWriter = (task: EndedTask) => void;

export function canSubmitWithin(s: TaskSubmitter): s is TaskSubmitter & SubmitWithin {
  const w = s as Partial<SubmitWithin>;
  return typeof w.admitWithin === 'function' && typeof w.canSubmitWithin === 'function' && w.canSubmitWithin();
}
