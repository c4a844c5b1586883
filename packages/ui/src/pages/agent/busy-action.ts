import { ref } from 'vue';
import { errorMessage } from './error-message';

/**
 * A page's action on the host (start, resume, batch…): `busy` while it runs; a failure becomes
 * the page's message in `error`, which is cleared when the action starts again.
 */
export function useBusyAction(t: (key: string) => string) {
  const busy = ref(false);
  const error = ref('');
  async function run(action: () => Promise<void>): Promise<void> {
    busy.value = true;
    error.value = '';
    try {
      await action();
    } catch (e) {
      error.value = errorMessage(e, t);
    } finally {
      busy.value = false;
    }
  }
  return { busy, error, run };
}
