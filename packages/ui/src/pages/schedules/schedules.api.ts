import type { PermissionMode } from '@fengyu/protocol';
import type { ApiClient } from '../../api/client';

/** Schedules of published workflows, as the host answers them. */

export type Recurrence =
  | { kind: 'daily'; time: string; timeZone: string }
  | { kind: 'weekly'; time: string; timeZone: string; weekdays: number[] }
  | { kind: 'monthly'; time: string; timeZone: string; day: number | 'last' }
  | { kind: 'interval'; everySeconds: number }
  | { kind: 'once'; delaySeconds: number };

export interface Schedule {
  id: string;
  workflowId: string;
  recurrence: Recurrence;
  permissionMode: PermissionMode;
  inputs: Record<string, unknown>;
  createdAt: string;
  nextRunAt: string | null;
  expiresAt?: string;
  triggerCount: number;
  missedFires: number;
  lastError?: { code: string; message: string; at: string };
  lastTaskId?: string;
  state: 'active' | 'paused' | 'expired' | 'done' | 'disabled';
  pausedReason?: string;
}

export interface CreateSchedule {
  workflowId: string;
  inputs: Record<string, unknown>;
  permissionMode: PermissionMode;
  runImmediately: boolean;
  recurrence: Recurrence;
}

const enc = encodeURIComponent;

export function schedulesApi(api: ApiClient) {
  return {
    list: () => api.get<{ items: Schedule[]; nextCursor?: string }>('/api/agent/schedules', { query: { limit: 100 } }),
    create: (body: CreateSchedule) => api.post<Schedule>('/api/agent/schedules', body),
    remove: (id: string) => api.del<unknown>(`/api/agent/schedules/${enc(id)}`),
    preview: (recurrence: Recurrence, count = 50, signal?: AbortSignal) => api.post<{ times: string[] }>('/api/agent/schedules/preview', { recurrence, count }, { signal }),
  };
}
