import type { AgentConfig } from '@fengyu/protocol';
import { defineStore } from 'pinia';
import { ref, shallowRef } from 'vue';
import type { RunFile } from '../api/workflows.api';
import type { Services } from '../app/services';
import { fieldErrors } from '../pages/inbox/inbox-form';
import type { RunView } from './run-state';
import { followRun, type RunFollower } from './run-stream';

/** The run being watched in the run panel: started here or reopened by id. */
export const useRun = defineStore('run', () => {
  const view = shallowRef<RunView>();
  const error = ref<string>();
  const busy = ref(false);
  let follower: RunFollower | undefined;
  let services: Services | undefined;

  function init(s: Services) {
    services = s;
  }
  const api = () => {
    if (!services) throw new Error('run store not initialised');
    return services;
  };

  function open(runId: string) {
    follower?.close();
    error.value = undefined;
    view.value = undefined;
    follower = followRun(api().agent.streamUrl(runId), runId, (v) => (view.value = v));
  }

  async function startWorkflow(workflowId: string, inputs: Record<string, unknown>, files: RunFile[], config?: AgentConfig): Promise<string | undefined> {
    busy.value = true;
    error.value = undefined;
    try {
      const { runId } = await api().workflows.run(workflowId, { inputs, ...(files.length ? { files } : {}), ...(config ? { config } : {}) });
      open(runId);
      return runId;
    } catch (e) {
      error.value = (e as Error).message;
      return undefined;
    } finally {
      busy.value = false;
    }
  }

  async function act(kind: 'approve' | 'cancel') {
    const id = view.value?.runId;
    if (!id) return;
    busy.value = true;
    error.value = undefined;
    try {
      await (kind === 'approve' ? api().agent.approve(id) : api().agent.cancel(id));
    } catch (e) {
      error.value = (e as Error).message;
    } finally {
      busy.value = false;
    }
  }

  /** Answers the pending input step; the host's refusal per field (empty when none) is returned. */
  async function input(values: Record<string, unknown>): Promise<Record<string, string>> {
    const id = view.value?.runId;
    if (!id) return {};
    busy.value = true;
    error.value = undefined;
    try {
      await api().agent.input(id, values);
      return {};
    } catch (e) {
      error.value = (e as Error).message;
      return fieldErrors(e);
    } finally {
      busy.value = false;
    }
  }

  function close() {
    follower?.close();
    follower = undefined;
    view.value = undefined;
  }

  return { view, error, busy, init, open, startWorkflow, approve: () => act('approve'), cancel: () => act('cancel'), input, close };
});
