import { type RunDetail, type RunListItem, type RunStatus, TERMINAL_STATUSES } from '@fengyu/protocol';
import type { ApiClient } from '../../api/client';

/** Run history: list with search, filters and paging; detail; resume / fork / rewind; batch. The shapes are the contract's. */

export const PAGE_SIZE = 20;
export const MAX_BATCH = 8;

const enc = encodeURIComponent;

export function runsApi(api: ApiClient) {
  return {
    list: (query: { q?: string; status?: string; cursor?: string; limit?: number }, signal?: AbortSignal) =>
      api.get<{ runs: RunListItem[]; nextCursor: string | null }>('/api/agent/runs', { query: { limit: PAGE_SIZE, ...query }, signal }),
    get: (id: string) => api.get<RunDetail>(`/api/agent/runs/${enc(id)}`),
    resume: (id: string) => api.post<{ runId: string }>(`/api/agent/runs/${enc(id)}/resume`),
    fork: (id: string) => api.post<{ runId: string }>(`/api/agent/runs/${enc(id)}/fork`),
    rewind: (id: string, keepSteps: number) => api.post<{ runId: string }>(`/api/agent/runs/${enc(id)}/rewind`, { keepSteps }),
    rewindPreview: (id: string, keepSteps: number) => api.post<RewindPreview>(`/api/agent/runs/${enc(id)}/rewind/preview`, { keepSteps }),
    batch: (goals: string[], config: Record<string, unknown>) => api.post<{ runIds: string[] }>('/api/agent/batch', { runs: goals.map((goal) => ({ goal, config })) }),
  };
}

/** Which actions a run offers (resume only after failed / cancelled / interrupted). */
/** `POST /api/agent/runs/{id}/rewind/preview` (docs/api.md): the dropped steps that already wrote or sent something. */
export interface RewindPreview {
  keepSteps: number;
  kept: string[];
  dropped: string[];
  alreadyApplied: Array<{ stepId: string; title?: string; ranStepId: string; tool: string; effect: 'write' | 'external' | 'command' | 'unknown'; status: 'done' | 'uncertain'; executions: number }>;
}

export function runActions(status: RunStatus): { resume: boolean; fork: boolean; rewind: boolean } {
  const ended = TERMINAL_STATUSES.includes(status);
  return { resume: ended && status !== 'completed', fork: ended, rewind: ended };
}

/** Goals of the batch form: one per non-blank line, at most eight. */
export function batchGoals(text: string): { goals: string[]; tooMany: boolean } {
  const goals = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  return { goals: goals.slice(0, MAX_BATCH), tooMany: goals.length > MAX_BATCH };
}
