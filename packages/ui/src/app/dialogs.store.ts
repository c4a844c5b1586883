import { defineStore } from 'pinia';
import { ref } from 'vue';

/** Promise-based confirmation dialogs (delete, discard unsaved changes), rendered by ConfirmDialog.vue. */

export interface ConfirmRequest {
  title: string;
  message: string;
  confirmLabel: string;
  danger?: boolean;
  resolve: (ok: boolean) => void;
}

export const useDialogs = defineStore('dialogs', () => {
  const pending = ref<ConfirmRequest | undefined>();
  function confirm(req: Omit<ConfirmRequest, 'resolve'>): Promise<boolean> {
    pending.value?.resolve(false);
    return new Promise((resolve) => {
      pending.value = { ...req, resolve };
    });
  }
  function answer(ok: boolean) {
    const p = pending.value;
    pending.value = undefined;
    p?.resolve(ok);
  }
  return { pending, confirm, answer };
});
