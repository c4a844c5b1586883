import type { SecretView } from '@fengyu/protocol';
import type { ApiClient } from './client';

/** The vault (docs/secrets.md): names and times only; a value goes in and never comes back. */
export function secretsApi(api: ApiClient) {
  const enc = encodeURIComponent;
  return {
    list: async () => (await api.get<{ items: SecretView[] }>('/api/secrets')).items ?? [],
    put: (name: string, value: string) => api.put<void>(`/api/secrets/${enc(name)}`, { value }),
    remove: (name: string) => api.del<void>(`/api/secrets/${enc(name)}`),
  };
}
