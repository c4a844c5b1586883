import type { AgentPlan, RunStatus } from '@fengyu/protocol';
import type { ApiClient } from '../../api/client';

/** Run history: list with search, filters and paging; detail; resume / fork / rewind; batch. */

export interface RunListItem {
  id: string;
  goal: string | null;
  status: RunStatus;
  summary: string | null;
  error: string | null;
  origin: string | null;
  parentRunId: string | null;
  workflowId: string | null;
  stepCount: number;
  createdAt: string;
  updatedAt: string;
  finishedAt: string | null;
}

export interface Execution {
  stepId: string;
  status?: string;
  result?: unknown;
  error?: string | null;
  attempts?: number;
  startedAt?: string | null;
  finishedAt?: string | null;
  durationMs?: number | null;
  [k: string]: unknown;
}

export interface RunEventRow {
  type: string;
  seq: number;
  ts: string;
  [k: string]: unknown;
}

export interface RunDetail extends RunListItem {
  plan: AgentPlan | null;
  config: Record<string, unknown>;
  inputs: Record<string, unknown>;
  result: unknown;
  gate: unknown;
  sandbox: { mode?: string; backend?: string } | null;
  executions: Execution[];
  events: RunEventRow[];
}

export const RUN_STATUSES: readonly RunStatus[] = ['planning', 'awaiting_plan_approval', 'running', 'awaiting_step_approval', 'completed', 'failed', 'cancelled', 'interrupted'];
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
    batch: (goals: string[], config: Record<string, unknown>) => api.post<{ runIds: string[] }>('/api/agent/batch', { runs: goals.map((goal) => ({ goal, config })) }),
  };
}

/** Which actions a run offers (resume only after failed / cancelled / interrupted). */
export function runActions(status: string): { resume: boolean; fork: boolean; rewind: boolean } {
  const ended = ['completed', 'failed', 'cancelled', 'interrupted'].includes(status);
  return { resume: ['failed', 'cancelled', 'interrupted'].includes(status), fork: ended, rewind: ended };
}

/** Goals of the batch form: one per non-blank line, at most eight. */
export function batchGoals(text: string): { goals: string[]; tooMany: boolean } {
  const goals = text
    .split(/\r?\n/)
    .map((l) => l.trim())
    .filter(Boolean);
  return { goals: goals.slice(0, MAX_BATCH), tooMany: goals.length > MAX_BATCH };
}
