import type { InboxFrames, InboxItem, InboxPage } from '@fengyu/protocol';
import { defineStore } from 'pinia';
import { computed, ref } from 'vue';
import type { ApiClient } from '../api/client';

/**
 * The owner's inbox, live: the first pages from `GET /api/inbox`, then `inbox_added` and
 * `inbox_removed` from its stream. The navigation shows `count`; a new item raises a browser
 * notification when the user allowed them (never asked for on load).
 */

export function inboxApi(api: ApiClient) {
  return {
    page: (cursor?: string) => api.get<InboxPage>('/api/inbox', { query: { cursor } }),
    answer: (id: string, body: Record<string, unknown>) => api.post<{ id: string; runId: string }>(`/api/inbox/${encodeURIComponent(id)}`, body),
    streamUrl: () => api.streamUrl('/api/inbox/stream', {}),
  };
}

/** Applies one stream frame to the list (pure: the list is replaced, never edited in place). */
export function applyFrame(items: readonly InboxItem[], type: keyof InboxFrames, data: unknown): InboxItem[] {
  if (type === 'inbox_added') {
    const item = (data as InboxFrames['inbox_added']).item;
    return items.some((i) => i.id === item.id) ? [...items] : [...items, item];
  }
  const id = (data as InboxFrames['inbox_removed']).id;
  return items.filter((i) => i.id !== id);
}

export const useInbox = defineStore('inbox', () => {
  const items = ref<InboxItem[]>([]);
  const loaded = ref(false);
  const count = computed(() => items.value.length);
  let source: EventSource | undefined;
  let notifyTitle: ((item: InboxItem) => string) | undefined;

  async function load(api: ReturnType<typeof inboxApi>) {
    const all: InboxItem[] = [];
    let cursor: string | undefined;
    do {
      const page = await api.page(cursor);
      all.push(...page.items);
      cursor = page.nextCursor;
    } while (cursor && all.length < 1000);
    items.value = all;
    loaded.value = true;
  }

  function notify(item: InboxItem) {
    if (typeof Notification === 'undefined' || Notification.permission !== 'granted' || !notifyTitle) return;
    try {
      new Notification(notifyTitle(item), { body: item.workflowName ?? item.title, tag: item.id });
    } catch {
      // a browser that refuses page notifications: the badge still counts it
    }
  }

  /** Loads the list, then follows the stream (reconnecting reloads, so nothing is missed). */
  function connect(api: ReturnType<typeof inboxApi>, title: (item: InboxItem) => string) {
    notifyTitle = title;
    source?.close();
    source = new EventSource(api.streamUrl());
    source.onopen = () => void load(api).catch(() => undefined);
    source.addEventListener('inbox_added', (m) => {
      const data = JSON.parse((m as MessageEvent).data) as InboxFrames['inbox_added'];
      items.value = applyFrame(items.value, 'inbox_added', data);
      notify(data.item);
    });
    source.addEventListener('inbox_removed', (m) => {
      items.value = applyFrame(items.value, 'inbox_removed', JSON.parse((m as MessageEvent).data));
    });
  }

  function remove(id: string) {
    items.value = items.value.filter((i) => i.id !== id);
  }

  function disconnect() {
    source?.close();
    source = undefined;
  }

  return { items, loaded, count, load, connect, disconnect, remove };
});
