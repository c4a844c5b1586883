import type { PermissionMode, Recurrence, ScheduleView } from '@fengyu/protocol';
import type { ApiClient } from '../../api/client';

/** The schedules API; the shapes it answers are the protocol's. */

export interface CreateSchedule {
  workflowId: string;
  inputs: Record<string, unknown>;
  /** Uploads for file inputs: the schedule keeps its own copy of each. */
  files?: Array<{ name: string; refs: Array<{ id: string }> }>;
  permissionMode: PermissionMode;
  runImmediately: boolean;
  recurrence: Recurrence;
}

const enc = encodeURIComponent;

export function schedulesApi(api: ApiClient) {
  return {
    list: () => api.get<{ items: ScheduleView[]; nextCursor?: string }>('/api/agent/schedules', { query: { limit: 100 } }),
    create: (body: CreateSchedule) => api.post<ScheduleView>('/api/agent/schedules', body),
    remove: (id: string) => api.del<unknown>(`/api/agent/schedules/${enc(id)}`),
    preview: (recurrence: Recurrence, count = 50, signal?: AbortSignal) => api.post<{ times: string[] }>('/api/agent/schedules/preview', { recurrence, count }, { signal }),
  };
}
