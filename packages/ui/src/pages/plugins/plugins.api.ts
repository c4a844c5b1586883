import type { ApiClient } from '../../api/client';

/** Plugins: list, install / upgrade by `.fyp` upload, enable / disable, uninstall, hook trust. */

export interface PluginTool {
  id: string;
  name: string;
  description: string;
  effect: string;
  idempotent: boolean;
  timeoutSeconds?: number;
  flowNode: boolean;
}

export interface PluginInfo {
  id: string;
  name: string;
  version: string;
  description: string;
  enabled: boolean;
  supportsAi: boolean;
  bundled: boolean;
  tools: PluginTool[];
  sandbox: { mode?: string; backend?: string };
  hooks: { present: boolean; trusted: boolean };
  installedAt?: string;
  updatedAt?: string;
  /** The manifest's translations per UI language (name, description, tool descriptions). */
  i18n?: Record<string, { name?: string; description?: string; tools?: Record<string, string> }>;
}

const enc = encodeURIComponent;

export function pluginsApi(api: ApiClient) {
  return {
    list: async () => {
      const body = await api.get<PluginInfo[] | { plugins: PluginInfo[] }>('/api/plugins');
      return Array.isArray(body) ? body : (body?.plugins ?? []);
    },
    install: (file: File) => api.upload<PluginInfo>('/api/plugins', file),
    setEnabled: (id: string, on: boolean) => api.post<PluginInfo>(`/api/plugins/${enc(id)}/${on ? 'enable' : 'disable'}`),
    uninstall: (id: string) => api.del<unknown>(`/api/plugins/${enc(id)}`),
    setTrusted: (id: string, on: boolean) => api.post<unknown>(`/api/plugin-hooks/${enc(id)}/${on ? 'trust' : 'untrust'}`),
  };
}
