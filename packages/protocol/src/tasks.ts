import type { PermissionMode } from './plan';

/** Background tasks and webhook triggers as the API answers them (the host and the UI share these shapes). */

export type TaskPriority = 'interactive' | 'normal' | 'batch';
export type TaskKind = 'workflow' | 'workflow-schedule' | 'workflow-webhook';
export type TaskState = 'queued' | 'running' | 'waiting' | 'completed' | 'failed' | 'cancelled' | 'interrupted';

/** The priorities, highest first. */
export const TASK_PRIORITIES: readonly TaskPriority[] = Object.freeze(['interactive', 'normal', 'batch'] as TaskPriority[]);
export const TASK_KINDS: readonly TaskKind[] = Object.freeze(['workflow', 'workflow-schedule', 'workflow-webhook'] as TaskKind[]);

/** One task, as REST, the task tools and the UI see it. Times are ISO-8601 UTC. */
export interface TaskSnapshot {
  id: string;
  ownerId: string;
  kind: TaskKind;
  priority: TaskPriority;
  state: TaskState;
  /** True while the task waits for a running slot. */
  queued: boolean;
  workflowId: string;
  workflowVersion: number;
  runId?: string;
  scheduleId?: string;
  triggerId?: string;
  submittedAt: string;
  startedAt?: string;
  finishedAt?: string;
  /** Time spent queued; advances while the task waits. */
  queueWaitMs: number;
  /** Time since the body started; advances while it runs. */
  runDurationMs?: number;
  /** The run's summary and final result as text, capped at 64 KiB. */
  output: { text: string; truncated: boolean };
  error?: { code: string; message: string };
}

/** Queue pressure, limits and reservations, plus the asking owner's share (`owned…`, `owner…`). */
export interface TaskCapacity {
  policy: string;
  maxRunning: number;
  /** Running slots one owner may hold (the rest stay free for other owners). */
  ownerMaxRunning: number;
  running: number;
  maxQueued: number;
  queued: number;
  saturated: boolean;
  activeOwners: number;
  byPriority: Record<TaskPriority, { running: number; queued: number }>;
  oldestQueueWaitMs: number;
  oldestInteractiveQueueWaitMs: number;
  oldestNormalQueueWaitMs: number;
  oldestBatchQueueWaitMs: number;
  batchLimit: { owner: number; global: number; ownerCount: number; globalCount: number };
  nonInteractiveLimit: { owner: number; global: number; ownerCount: number; globalCount: number };
  ownerQueueLimit: number;
  ownedQueued: number;
  ownedRunning: number;
  ownedQueueAvailable: number;
  ownerSaturated: boolean;
}

export type TriggerState = 'active' | 'paused' | 'disabled';

/** A workflow's webhook trigger (its secret is shown once, at creation and rotation, never here). */
export interface WebhookTriggerView {
  id: string;
  workflowId: string;
  name: string;
  defaults: Record<string, unknown>;
  permissionMode: PermissionMode;
  state: TriggerState;
  pausedReason?: 'sandbox_weakened';
  createdAt: string;
  lastDeliveryAt?: string;
}

export type DeliveryState = 'CLAIMED' | 'QUEUED' | 'SUBMITTED' | 'COMPLETED' | 'FAILED' | 'CANCELLED' | 'INTERRUPTED';

/** One delivery of a webhook trigger. */
export interface WebhookDeliveryView {
  id: string;
  state: DeliveryState;
  acceptedAt: string;
  completedAt?: string;
  durationMs?: number;
  taskId?: string;
  idempotencyKeySupplied: boolean;
  error?: { code: string; message: string };
}
