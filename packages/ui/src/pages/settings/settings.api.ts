import { type HookEvent, type McpServerView, type ProviderKind, REDACTED } from '@fengyu/protocol';
import type { ApiClient } from '../../api/client';

/** Settings: the redacted document, merge-patch saves, the rule dry run, MCP server status. */

export interface HookSetting {
  name: string;
  event: HookEvent;
  matcher?: string;
  type: 'command' | 'http';
  command?: string;
  url?: string;
  timeoutSeconds?: number;
  enabled?: boolean;
  /** pre_tool_use only: a hook that crashes, times out or answers garbage blocks the call. */
  failClosed?: boolean;
  allowPrivateNetwork?: boolean;
}

export interface BackendSetting {
  id: string;
  provider: ProviderKind;
  baseURL?: string;
  model: string;
  apiKey?: string;
  apiKeyEnv?: string;
}

export interface SettingsDoc {
  permissions?: { deny?: string[]; ask?: string[]; allow?: string[] };
  hooks?: HookSetting[];
  backends?: BackendSetting[];
  defaultBackend?: string | null;
  mcpServers?: Record<string, Record<string, unknown>>;
  webSearch?: { provider?: string; url?: string } | null;
  webFetch?: { allowPrivateNetwork?: boolean };
  memory?: { enabled?: boolean };
  /** `callTimeoutSeconds`: the per-call timeout (1–600 s) of a tool that declares none. */
  backend?: { callTimeoutSeconds?: number };
  locale?: string;
  [k: string]: unknown;
}

export interface CheckResult {
  decision: 'allow' | 'ask' | 'deny';
  source: string;
  rule?: string;
  reason: string;
}

/** The marker the host shows for a saved key (its one redaction marker); sending it back keeps the key. */
export const KEY_MARKER = REDACTED;

export function settingsApi(api: ApiClient) {
  return {
    get: () => api.get<SettingsDoc>('/api/settings'),
    patch: (patch: Partial<SettingsDoc>) => api.request<SettingsDoc>('PATCH', '/api/settings', { body: patch }),
    check: (body: { tool: string; arguments?: Record<string, unknown>; permissionMode?: string; rules?: { deny: string[]; ask: string[]; allow: string[] } }) => api.post<CheckResult>('/api/permissions/check', body),
    mcpServers: async () => {
      const body = await api.get<McpServerView[] | { servers: McpServerView[] }>('/api/mcp/servers');
      return Array.isArray(body) ? body : (body?.servers ?? []);
    },
    reconnect: (name: string) => api.post<McpServerView>(`/api/mcp/servers/${encodeURIComponent(name)}/reconnect`),
  };
}

export type SettingsApi = ReturnType<typeof settingsApi>;

/** Problems of a settings 400 that belong to one section, as "field: message" lines. */
export function sectionProblems(details: unknown, section: string): string[] {
  if (!Array.isArray(details)) return [];
  return (details as Array<{ field?: string; message?: string; code?: string }>)
    .filter((d) => typeof d.field === 'string' && (d.field === section || d.field.startsWith(`${section}.`) || d.field.startsWith(`${section}[`)))
    .map((d) => `${d.field}: ${d.message ?? d.code ?? ''}`);
}

/**
 * The backend as it is sent back: a typed key replaces the saved one; an untouched saved key is
 * sent as the marker (kept); `removeKey` drops it. The saved key itself is never in the page.
 */
export function backendForSave(b: BackendSetting, typedKey: string, removeKey: boolean): BackendSetting {
  const { apiKey, ...rest } = b;
  const out: BackendSetting = { ...rest };
  if (!out.baseURL) delete out.baseURL;
  if (!out.apiKeyEnv) delete out.apiKeyEnv;
  if (typedKey.trim()) out.apiKey = typedKey.trim();
  else if (apiKey === KEY_MARKER && !removeKey && !out.apiKeyEnv) out.apiKey = KEY_MARKER;
  return out;
}
