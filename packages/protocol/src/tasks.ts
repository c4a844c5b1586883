import type { PermissionMode } from './plan';

/** Background tasks and webhook triggers as the API answers them (the host and the UI share these shapes). */

/** How urgent a task is: the queue serves owners in turn and each owner's classes in a 4:2:1 cycle. */
export type TaskPriority = 'interactive' | 'normal' | 'batch';
/**
 * What submitted a task: the API or a tool (`workflow`), a schedule, a webhook delivery, or a run's
 * failure (`workflow-error`: the error workflow of a failed run).
 */
export type TaskKind = 'workflow' | 'workflow-schedule' | 'workflow-webhook' | 'workflow-error';
/**
 * Where a task is: `queued` for a slot, `running`, `waiting` (its run waits at a gate and gave its
 * slot up), or ended (`completed`, `failed`, `cancelled`, `interrupted` by a host stop).
 */
export type TaskState = 'queued' | 'running' | 'waiting' | 'completed' | 'failed' | 'cancelled' | 'interrupted';

/** The priorities, highest first. */
export const TASK_PRIORITIES: readonly TaskPriority[] = Object.freeze(['interactive', 'normal', 'batch'] as TaskPriority[]);
/** Every task kind. */
export const TASK_KINDS: readonly TaskKind[] = Object.freeze(['workflow', 'workflow-schedule', 'workflow-webhook', 'workflow-error'] as TaskKind[]);

/** One task, as REST, the task tools and the UI see it. Times are ISO-8601 UTC. */
export interface TaskSnapshot {
  /** The task's id. */
  id: string;
  /** The owner who submitted it (only they see it). */
  ownerId: string;
  /** What submitted it. */
  kind: TaskKind;
  /** Its queue priority. */
  priority: TaskPriority;
  /** Where it is now. */
  state: TaskState;
  /** True while the task waits for a running slot. */
  queued: boolean;
  /** The workflow it runs. */
  workflowId: string;
  /** The published version of that workflow it runs (fixed at submission). */
  workflowVersion: number;
  /** The run its body started; absent until it started. */
  runId?: string;
  /** The schedule that fired it (`workflow-schedule` tasks only). */
  scheduleId?: string;
  /** The webhook trigger whose delivery submitted it (`workflow-webhook` tasks only). */
  triggerId?: string;
  /** When it was submitted. */
  submittedAt: string;
  /** When its body started; absent while it is queued. */
  startedAt?: string;
  /** When it ended; absent until then. */
  finishedAt?: string;
  /** Time spent queued; advances while the task waits. */
  queueWaitMs: number;
  /** Time since the body started; advances while it runs. */
  runDurationMs?: number;
  /** The run's summary and final result as text, capped at 64 KiB (`truncated` when it was cut). */
  output: {
    /** The text (empty until the task ended). */
    text: string;
    /** True when the text was cut at the cap. */
    truncated: boolean;
  };
  /** Why it failed, was cancelled or interrupted; absent otherwise. */
  error?: TaskError;
}

/** Why a task or a delivery failed, was cancelled or interrupted. */
export interface TaskError {
  /** The stable error code (e.g. `task_interrupted`, `capacity_exhausted`). */
  code: string;
  /** The error in words. */
  message: string;
}

/** Queue pressure, limits and reservations, plus the asking owner's share (`owned…`, `owner…`). */
export interface TaskCapacity {
  /** The admission and dispatch policy's name (`owner-round-robin-weighted-priority`). */
  policy: string;
  /** Bodies that may run at once, across owners. */
  maxRunning: number;
  /** Running slots one owner may hold (the rest stay free for other owners). */
  ownerMaxRunning: number;
  /** Bodies running now. */
  running: number;
  /** Tasks that may be queued at once, across owners. */
  maxQueued: number;
  /** Tasks queued now. */
  queued: number;
  /** True when no running slot is free. */
  saturated: boolean;
  /** Owners with a queued or running task. */
  activeOwners: number;
  /** Running and queued tasks of each priority, across owners. */
  byPriority: Record<
    TaskPriority,
    {
      /** Running tasks of this priority. */
      running: number;
      /** Queued tasks of this priority. */
      queued: number;
    }
  >;
  /** The longest wait of a queued task in milliseconds, any priority; 0 when nothing is queued. */
  oldestQueueWaitMs: number;
  /** The longest wait of a queued interactive task in milliseconds; 0 when none is queued. */
  oldestInteractiveQueueWaitMs: number;
  /** The longest wait of a queued normal task in milliseconds; 0 when none is queued. */
  oldestNormalQueueWaitMs: number;
  /** The longest wait of a queued batch task in milliseconds; 0 when none is queued. */
  oldestBatchQueueWaitMs: number;
  /** The reservation on queued batch tasks. */
  batchLimit: QueueReservation;
  /** The reservation on queued batch and normal tasks together (the rest of the queue is kept for interactive work). */
  nonInteractiveLimit: QueueReservation;
  /** Tasks one owner may have queued. */
  ownerQueueLimit: number;
  /** The asker's queued tasks. */
  ownedQueued: number;
  /** The asker's running tasks. */
  ownedRunning: number;
  /** How many more tasks the asker could queue now (their allowance and the global queue both bound it). */
  ownedQueueAvailable: number;
  /** True when the asker's queue allowance is full. */
  ownerSaturated: boolean;
}

/** A cap on queued tasks of some priorities, and how much of it is used. */
export interface QueueReservation {
  /** How many such tasks one owner may have queued. */
  owner: number;
  /** How many such tasks may be queued in all. */
  global: number;
  /** How many the asker has queued. */
  ownerCount: number;
  /** How many are queued in all. */
  globalCount: number;
}

/** A trigger is `active`, `paused` (by the host: see `pausedReason`) or `disabled` (its workflow was deleted; it answers no delivery). */
export type TriggerState = 'active' | 'paused' | 'disabled';

/** A workflow's webhook trigger (its secret is shown once, at creation and rotation, never here). */
export interface WebhookTriggerView {
  /** The trigger's id (`wh_…`), part of its delivery URL. */
  id: string;
  /** The workflow a delivery runs. */
  workflowId: string;
  /** The trigger's display name. */
  name: string;
  /** Inputs used when a delivery does not send them (inputs the workflow declares). */
  defaults: Record<string, unknown>;
  /** The permission mode its runs use (nobody is there to approve). */
  permissionMode: PermissionMode;
  /** Whether deliveries are accepted now. */
  state: TriggerState;
  /** Why it is paused: created while plugins ran sandboxed, and the host now runs them unsandboxed. */
  pausedReason?: 'sandbox_weakened';
  /** When it was created (ISO-8601 UTC). */
  createdAt: string;
  /** When its latest delivery was accepted (ISO-8601 UTC); absent before the first. */
  lastDeliveryAt?: string;
}

/**
 * A delivery's state: `CLAIMED` (being submitted), `QUEUED`, `SUBMITTED` (its task runs), or how it
 * ended (`COMPLETED`, `FAILED` also for a refusal that ran nothing, `CANCELLED`, `INTERRUPTED` by a host stop).
 */
export type DeliveryState = 'CLAIMED' | 'QUEUED' | 'SUBMITTED' | 'COMPLETED' | 'FAILED' | 'CANCELLED' | 'INTERRUPTED';

/** One delivery of a webhook trigger. */
export interface WebhookDeliveryView {
  /** The delivery's id (`whd_…`). */
  id: string;
  /** Where the delivery is. */
  state: DeliveryState;
  /** When it was accepted (ISO-8601 UTC). */
  acceptedAt: string;
  /** When it ended (ISO-8601 UTC); absent while it is live. */
  completedAt?: string;
  /** Milliseconds from acceptance to completion; absent while it is live. */
  durationMs?: number;
  /** The task it submitted; absent when none was (a refusal, or interrupted before submission). */
  taskId?: string;
  /** True when the delivery carried an event id (`X-FengYu-Event-Id`); the id itself is never kept. */
  idempotencyKeySupplied: boolean;
  /** Why it failed or was interrupted. */
  error?: TaskError;
}
