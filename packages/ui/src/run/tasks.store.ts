import type { PermissionMode, TaskCapacity, TaskPriority, TaskSnapshot } from '@fengyu/protocol';
import { defineStore } from 'pinia';
import { ref, shallowRef } from 'vue';
import type { Services } from '../app/services';
import { type BusyRefusal, busyRefusal } from './capacity';
import { tasksApi } from './tasks.api';

/**
 * The caller's background tasks and the host's capacity, refreshed while a view that shows them
 * is open (each open view holds a subscription; the last one to close stops the refresh).
 */

export const REFRESH_MS = 1500;

export type SubmitOutcome = { ok: true; task: TaskSnapshot } | { ok: false; busy: BusyRefusal } | { ok: false; error: unknown };

export const useTasks = defineStore('tasks', () => {
  const tasks = shallowRef<TaskSnapshot[]>([]);
  const capacity = shallowRef<TaskCapacity>();
  /** When the snapshots were read (durations advance from here). */
  const readAt = ref(0);
  const error = ref<unknown>();
  let services: Services | undefined;
  let watchers = 0;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let inflight: Promise<void> | undefined;

  const api = () => {
    if (!services) throw new Error('tasks store not initialised');
    return tasksApi(services.api);
  };

  function init(s: Services) {
    services = s;
  }

  function refresh(): Promise<void> {
    if (inflight) return inflight;
    inflight = (async () => {
      try {
        const [list, cap] = await Promise.all([api().list(50), api().capacity()]);
        tasks.value = list.items;
        capacity.value = cap;
        readAt.value = Date.now();
        error.value = undefined;
      } catch (e) {
        error.value = e;
      } finally {
        inflight = undefined;
      }
    })();
    return inflight;
  }

  function loop() {
    clearTimeout(timer);
    if (watchers <= 0) return;
    void refresh().finally(() => {
      if (watchers > 0) timer = setTimeout(loop, REFRESH_MS);
    });
  }

  /** Keeps the tasks fresh until the returned function is called. */
  function watch(): () => void {
    watchers++;
    if (watchers === 1) loop();
    let done = false;
    return () => {
      if (done) return;
      done = true;
      watchers--;
      if (watchers <= 0) clearTimeout(timer);
    };
  }

  async function submit(workflowId: string, inputs: Record<string, unknown>, permissionMode: PermissionMode, priority: TaskPriority = 'normal'): Promise<SubmitOutcome> {
    try {
      const task = await api().submit({ workflowId, inputs, permissionMode, priority });
      tasks.value = [task, ...tasks.value.filter((t) => t.id !== task.id)];
      void refresh();
      return { ok: true, task };
    } catch (e) {
      const busy = busyRefusal(e);
      return busy ? { ok: false, busy } : { ok: false, error: e };
    }
  }

  async function kill(id: string): Promise<void> {
    const task = await api().kill(id);
    tasks.value = tasks.value.map((t) => (t.id === id ? { ...t, ...task } : t));
    void refresh();
  }

  return { tasks, capacity, readAt, error, init, refresh, watch, submit, kill };
});
