import type { PluginView } from '@fengyu/protocol';
import type { ApiClient } from '../../api/client';

/** Plugins: list, install / upgrade by `.fyp` upload, enable / disable, uninstall, hook trust. */

const enc = encodeURIComponent;

export function pluginsApi(api: ApiClient) {
  return {
    list: async () => {
      const body = await api.get<PluginView[] | { plugins: PluginView[] }>('/api/plugins');
      return Array.isArray(body) ? body : (body?.plugins ?? []);
    },
    install: (file: File) => api.upload<PluginView>('/api/plugins', file),
    setEnabled: (id: string, on: boolean) => api.post<PluginView>(`/api/plugins/${enc(id)}/${on ? 'enable' : 'disable'}`),
    uninstall: (id: string) => api.del<unknown>(`/api/plugins/${enc(id)}`),
    setTrusted: (id: string, on: boolean) => api.post<unknown>(`/api/plugin-hooks/${enc(id)}/${on ? 'trust' : 'untrust'}`),
  };
}
