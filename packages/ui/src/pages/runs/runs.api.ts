import { type AgentPlan, type RunEvent, type RunStatus, TERMINAL_STATUSES } from '@fengyu/protocol';
import type { ApiClient } from '../../api/client';

/**
 * Run history: list with search, filters and paging; detail; resume / fork / rewind; batch.
 * The list item, detail and execution shapes are what the host answers (the contract package
 * declares no run-history types); statuses, plans and events are the contract's.
 */

export interface RunListItem {
  id: string;
  goal: string | null;
  status: RunStatus;
  summary: string | null;
  error: string | null;
  origin: string | null;
  parentRunId: string | null;
  workflowId: string | null;
  workflowVersion: number | null;
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

export interface RunDetail extends RunListItem {
  plan: AgentPlan | null;
  config: Record<string, unknown>;
  inputs: Record<string, unknown>;
  result: unknown;
  gate: unknown;
  sandbox: { mode?: string; backend?: string } | null;
  executions: Execution[];
  /** The run's event log, without the plan's token stream. */
  events: RunEvent[];
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
