import type { ApiClient } from '../../api/client';

/** The Memory screen's API (docs/api.md#memory): one page of memories, searched; delete one. */

export interface MemoryEntry {
  id: string;
  text: string;
  createdAt: string;
  source: { runId?: string; conversationId?: string };
}

export function memoryApi(api: ApiClient) {
  return {
    page: (q: string, cursor?: string) => {
      const params = new URLSearchParams();
      if (q.trim()) params.set('q', q.trim());
      if (cursor) params.set('cursor', cursor);
      const query = params.toString();
      return api.get<{ items: MemoryEntry[]; nextCursor?: string }>(`/api/memory${query ? `?${query}` : ''}`);
    },
    remove: (id: string) => api.del<void>(`/api/memory/${encodeURIComponent(id)}`),
    enabled: async () => !!(await api.get<{ memory?: { enabled?: boolean } }>('/api/settings')).memory?.enabled,
  };
}
