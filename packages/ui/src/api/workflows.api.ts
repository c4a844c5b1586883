import type { AgentConfig, CatalogEntry, ImportResult, WorkflowDiff, WorkflowExport, McpClientLaunch, WorkflowMcp, WorkflowTemplate as ProtocolTemplate, RunListItem, WorkflowDefinition, WorkflowDraft, WorkflowVersionInfo } from '@fengyu/protocol';
import type { ApiClient } from './client';

/** The workflows API and the bits of the agent API the builder uses. */

/** A saved definition and a save request: the contract's types. */
export type { WorkflowDefinition, WorkflowDraft };

/** A gallery template (the contract's type) with what the host's gallery adds to each. */
export type WorkflowTemplate = ProtocolTemplate & {
  /** Tools the template uses that this host does not have (e.g. a plugin not installed). */
  missingTools?: string[];
  /** The template's texts per UI language (name, description, …); the host applies them on create. */
  i18n?: Partial<Record<string, { name?: string; description?: string }>>;
};

/** One published version (the contract's type). */
export type WorkflowVersion = WorkflowVersionInfo;

export interface FileRef {
  id: string;
  name: string;
  size: number;
  sha256: string;
}

export interface RunFile {
  name: string;
  refs: FileRef[];
}

export interface EnumOption {
  value: unknown;
  label: string;
}

function list<T>(value: unknown, key: string): T[] {
  if (Array.isArray(value)) return value as T[];
  const inner = (value as Record<string, unknown> | undefined)?.[key];
  return Array.isArray(inner) ? (inner as T[]) : [];
}

const enc = encodeURIComponent;

export function workflowsApi(api: ApiClient) {
  return {
    list: async () => list<WorkflowDefinition>(await api.get('/api/workflows'), 'workflows'),
    get: (id: string) => api.get<WorkflowDefinition>(`/api/workflows/${enc(id)}`),
    create: (draft: WorkflowDraft) => api.post<WorkflowDefinition>('/api/workflows', draft),
    fromTemplate: (templateId: string) => api.post<WorkflowDefinition>('/api/workflows', { templateId }),
    save: (id: string, draft: WorkflowDraft, revision: number) => api.put<WorkflowDefinition>(`/api/workflows/${enc(id)}`, { ...draft, revision }),
    remove: (id: string) => api.del<void>(`/api/workflows/${enc(id)}`),
    duplicate: (id: string) => api.post<WorkflowDefinition>(`/api/workflows/${enc(id)}/duplicate`, {}),
    publish: (id: string, revision: number) => api.post<WorkflowDefinition>(`/api/workflows/${enc(id)}/publish`, { revision }),
    versions: async (id: string) => list<WorkflowVersion>(await api.get(`/api/workflows/${enc(id)}/versions`), 'versions'),
    restore: (id: string, version: number, revision: number) => api.post<WorkflowDefinition>(`/api/workflows/${enc(id)}/restore`, { version, revision }),
    templates: async () => list<WorkflowTemplate>(await api.get('/api/workflow-templates'), 'templates'),
    run: (id: string, body: { inputs: Record<string, unknown>; config?: AgentConfig; files?: RunFile[] }) =>
      api.post<{ runId: string }>(`/api/workflows/${enc(id)}/run`, body),
    exportDoc: (id: string) => api.get<WorkflowExport>(`/api/workflows/${enc(id)}/export`),
    importDoc: (doc: unknown) => api.post<ImportResult>('/api/workflows/import', doc),
    diff: (id: string, from: number | 'draft', to: number | 'draft') => api.get<WorkflowDiff>(`/api/workflows/${enc(id)}/diff`, { query: { from: String(from), to: String(to) } }),
    version: (id: string, version: number) => api.get<WorkflowVersionInfo & { graph: Record<string, unknown> | null; plan: WorkflowDefinition['plan']; inputSchema: WorkflowDefinition['inputSchema']; layout?: Record<string, { x: number; y: number }> | null }>(`/api/workflows/${enc(id)}/versions/${version}`),
    /** How an MCP client that spawns a command starts `fengyu mcp` for this host. */
    mcpClient: () => api.get<McpClientLaunch>('/api/mcp/client'),
    setMcp: (id: string, mcp: WorkflowMcp, revision: number) => api.put<WorkflowDefinition>(`/api/workflows/${enc(id)}`, { revision, mcp }),
    options: async (id: string, field: string) => list<EnumOption>(await api.get(`/api/workflows/${enc(id)}/inputs/${enc(field)}/options`), 'options'),
  };
}

export function agentApi(api: ApiClient) {
  return {
    tools: async () => list<CatalogEntry>(await api.get('/api/agent/tools'), 'tools'),
    approve: (runId: string) => api.post<unknown>(`/api/agent/${enc(runId)}/approve`),
    cancel: (runId: string) => api.post<unknown>(`/api/agent/${enc(runId)}/cancel`),
    /** Answers the run's pending input step with `values`. */
    input: (runId: string, values: Record<string, unknown>) => api.post<unknown>(`/api/agent/${enc(runId)}/input`, { values }),
    run: (runId: string) => api.get<Record<string, unknown>>(`/api/agent/runs/${enc(runId)}`),
    /** The caller's runs, newest first; with `workflowId`, only that workflow's (filtered by the host). */
    runs: async (query: { q?: string; workflowId?: string; limit?: number } = {}) => list<RunListItem>(await api.get('/api/agent/runs', { query }), 'runs'),
    streamUrl: (runId: string) => api.streamUrl('/api/agent/stream', { runId }),
  };
}

export function filesApi(api: ApiClient) {
  return {
    upload: (file: File) => api.upload<FileRef>('/api/files', file),
  };
}

export type WorkflowsApi = ReturnType<typeof workflowsApi>;
export type AgentApi = ReturnType<typeof agentApi>;
export type FilesApi = ReturnType<typeof filesApi>;
