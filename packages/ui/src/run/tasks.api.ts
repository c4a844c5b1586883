import type { PermissionMode } from '@fengyu/protocol';
import type { ApiClient } from '../api/client';

/** Background tasks and webhook triggers as the host answers them. */

export type TaskPriority = 'interactive' | 'normal' | 'batch';
export type TaskKind = 'workflow' | 'workflow-schedule' | 'workflow-webhook';
export type TaskState = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled' | 'interrupted';
export const PRIORITIES: readonly TaskPriority[] = ['interactive', 'normal', 'batch'];

export interface Task {
  id: string;
  kind: TaskKind;
  priority: TaskPriority;
  state: TaskState;
  queued: boolean;
  workflowId: string;
  workflowVersion: number;
  runId?: string;
  scheduleId?: string;
  triggerId?: string;
  submittedAt: string;
  startedAt?: string;
  finishedAt?: string;
  queueWaitMs: number;
  runDurationMs?: number;
  output: { text: string; truncated: boolean };
  error?: { code: string; message: string };
}

export interface Capacity {
  maxRunning: number;
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
  ownerQueueLimit: number;
  ownedQueued: number;
  ownedRunning: number;
  ownedQueueAvailable: number;
  ownerSaturated: boolean;
}

export interface Trigger {
  id: string;
  workflowId: string;
  name: string;
  defaults: Record<string, unknown>;
  permissionMode: PermissionMode;
  state: 'active' | 'paused' | 'disabled';
  pausedReason?: string;
  createdAt: string;
  lastDeliveryAt?: string;
}

export type DeliveryState = 'CLAIMED' | 'QUEUED' | 'SUBMITTED' | 'COMPLETED' | 'FAILED' | 'CANCELLED' | 'INTERRUPTED';

export interface Delivery {
  id: string;
  state: DeliveryState;
  acceptedAt: string;
  completedAt?: string;
  durationMs?: number;
  taskId?: string;
  idempotencyKeySupplied: boolean;
  error?: { code: string; message: string };
}

export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

const enc = encodeURIComponent;

export function tasksApi(api: ApiClient) {
  return {
    submit: (body: { workflowId: string; inputs?: Record<string, unknown>; priority?: TaskPriority; permissionMode?: PermissionMode }) => api.post<Task>('/api/agent/tasks', body),
    list: (limit = 50) => api.get<Page<Task>>('/api/agent/tasks', { query: { limit } }),
    get: (id: string) => api.get<Task>(`/api/agent/tasks/${enc(id)}`),
    capacity: () => api.get<Capacity>('/api/agent/tasks/capacity'),
    kill: (id: string) => api.post<Task>(`/api/agent/tasks/${enc(id)}/kill`),
  };
}

export function webhooksApi(api: ApiClient) {
  const base = (workflowId: string) => `/api/workflows/${enc(workflowId)}/webhooks`;
  return {
    create: (workflowId: string, body: { defaults?: Record<string, unknown>; permissionMode: PermissionMode; name?: string }) => api.post<{ trigger: Trigger; secret: string }>(base(workflowId), body),
    list: (workflowId: string) => api.get<Page<Trigger>>(base(workflowId)),
    rotate: (workflowId: string, id: string) => api.post<{ secret: string }>(`${base(workflowId)}/${enc(id)}/rotate`),
    remove: (workflowId: string, id: string) => api.del<unknown>(`${base(workflowId)}/${enc(id)}`),
    deliveries: (workflowId: string, id: string, cursor?: string, limit = 10) => api.get<Page<Delivery>>(`${base(workflowId)}/${enc(id)}/deliveries`, { query: { limit, cursor } }),
  };
}

/** The address another local program posts to (the host's own origin; loopback only). */
export function deliveryUrl(origin: string, triggerId: string): string {
  return `${origin}/api/workflow-hooks/${enc(triggerId)}`;
}

/** A ready command line that delivers `body` with the trigger's secret and a fresh event id. */
export function curlLine(url: string, secret: string, body: Record<string, unknown>): string {
  const json = JSON.stringify(body).replace(/'/g, `'\\''`);
  return `curl -X POST '${url}' -H 'Content-Type: application/json' -H 'X-FengYu-Webhook-Secret: ${secret}' -H "X-FengYu-Event-Id: $(date +%s%N)" -d '${json}'`;
}

export type TasksApi = ReturnType<typeof tasksApi>;
export type WebhooksApi = ReturnType<typeof webhooksApi>;
