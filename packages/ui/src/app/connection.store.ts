import { defineStore } from 'pinia';
import { ref } from 'vue';
import type { ConnectionStatus } from '../api/client';

/** Host reachability and token state, shown by the shell (banner / token dialog). */
export const useConnection = defineStore('connection', () => {
  const status = ref<ConnectionStatus>('ok');
  /** Bumped when the token changes so pages reload their data. */
  const epoch = ref(0);
  function report(next: ConnectionStatus) {
    status.value = next;
  }
  function tokenChanged() {
    status.value = 'ok';
    epoch.value++;
  }
  return { status, epoch, report, tokenChanged };
});
