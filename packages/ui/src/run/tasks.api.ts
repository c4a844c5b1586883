import type { PermissionMode, TaskCapacity, TaskPriority, TaskSnapshot, WebhookDeliveryView, WebhookTriggerView } from '@fengyu/protocol';
import type { ApiClient } from '../api/client';

/** The background-tasks and webhook-triggers API; the shapes it answers are the protocol's. */

export interface Page<T> {
  items: T[];
  nextCursor?: string;
}

const enc = encodeURIComponent;

export function tasksApi(api: ApiClient) {
  return {
    submit: (body: { workflowId: string; inputs?: Record<string, unknown>; files?: Array<{ name: string; refs: Array<{ id: string }> }>; priority?: TaskPriority; permissionMode?: PermissionMode }) => api.post<TaskSnapshot>('/api/agent/tasks', body),
    list: (limit = 50) => api.get<Page<TaskSnapshot>>('/api/agent/tasks', { query: { limit } }),
    get: (id: string) => api.get<TaskSnapshot>(`/api/agent/tasks/${enc(id)}`),
    capacity: () => api.get<TaskCapacity>('/api/agent/tasks/capacity'),
    kill: (id: string) => api.post<TaskSnapshot>(`/api/agent/tasks/${enc(id)}/kill`),
  };
}

export function webhooksApi(api: ApiClient) {
  const base = (workflowId: string) => `/api/workflows/${enc(workflowId)}/webhooks`;
  return {
    create: (workflowId: string, body: { defaults?: Record<string, unknown>; permissionMode: PermissionMode; name?: string }) => api.post<{ trigger: WebhookTriggerView; secret: string }>(base(workflowId), body),
    list: (workflowId: string) => api.get<Page<WebhookTriggerView>>(base(workflowId)),
    rotate: (workflowId: string, id: string) => api.post<{ secret: string }>(`${base(workflowId)}/${enc(id)}/rotate`),
    remove: (workflowId: string, id: string) => api.del<unknown>(`${base(workflowId)}/${enc(id)}`),
    deliveries: (workflowId: string, id: string, cursor?: string, limit = 10) => api.get<Page<WebhookDeliveryView>>(`${base(workflowId)}/${enc(id)}/deliveries`, { query: { limit, cursor } }),
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
