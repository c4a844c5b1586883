import type { AgentConfig, AgentPlan, RetryPreview, RetryVersion } from '@fengyu/protocol';
import type { ApiClient } from '../../api/client';

/** The calls of the Agent page and the bits of settings it reads (backends). */

export interface BackendChoice {
  id: string;
  provider: string;
  model: string;
}

const enc = encodeURIComponent;

export function agentPageApi(api: ApiClient) {
  return {
    start: (goal: string, config: AgentConfig) => api.post<{ runId: string }>('/api/agent/run', { goal, config }),
    approvePlan: (runId: string, plan?: AgentPlan) => api.post<unknown>(`/api/agent/${enc(runId)}/approve`, plan),
    approveStep: (runId: string) => api.post<unknown>(`/api/agent/${enc(runId)}/approve`),
    reject: (runId: string, reason?: string) => api.post<unknown>(`/api/agent/${enc(runId)}/approve`, { decision: 'reject', ...(reason ? { reason } : {}) }),
    /** Answers the run's pending input step (400 `input_values_invalid` names every field that does not fit). */
    input: (runId: string, values: Record<string, unknown>) => api.post<unknown>(`/api/agent/${enc(runId)}/input`, { values }),
    cancel: (runId: string) => api.post<unknown>(`/api/agent/${enc(runId)}/cancel`),
    run: (runId: string) => api.get<Record<string, unknown>>(`/api/agent/runs/${enc(runId)}`),
    /** Retry a failed or interrupted run from its failed step: a new run, started at once. */
    retry: (runId: string, version: RetryVersion) => api.post<{ runId: string }>(`/api/agent/runs/${enc(runId)}/retry`, { version }),
    retryPreview: (runId: string, version: RetryVersion) => api.post<RetryPreview>(`/api/agent/runs/${enc(runId)}/retry/preview`, { version }),
    streamUrl: (runId: string) => api.streamUrl('/api/agent/stream', { runId }),
    async backends(): Promise<{ backends: BackendChoice[]; defaultBackend?: string }> {
      const s = await api.get<{ backends?: BackendChoice[]; defaultBackend?: string | null }>('/api/settings');
      return { backends: Array.isArray(s.backends) ? s.backends : [], defaultBackend: s.defaultBackend ?? undefined };
    },
  };
}
