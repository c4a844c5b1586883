import { ref } from 'vue';
import { ApiError } from '../../api/client';
import { errorMessage } from '../agent/error-message';
import { type SettingsApi, type SettingsDoc, sectionProblems } from './settings.api';

type Translate = (key: string, params?: Record<string, unknown>) => string;

/**
 * Saving one or more settings sections as a merge patch: `saving` while the request runs,
 * `saved` after it succeeded, and `problems` — the server's problems for these sections, or the
 * error's own localized message when none of them is about these sections.
 */
export function useSectionSave(api: SettingsApi, sections: readonly string[], t: Translate) {
  const problems = ref<string[]>([]);
  const saving = ref(false);
  const saved = ref(false);

  async function save(patch: Partial<SettingsDoc>): Promise<SettingsDoc | undefined> {
    saving.value = true;
    saved.value = false;
    problems.value = [];
    try {
      const doc = await api.patch(patch);
      saved.value = true;
      return doc;
    } catch (e) {
      const list = e instanceof ApiError ? sections.flatMap((s) => sectionProblems(e.details, s)) : [];
      problems.value = list.length ? list : [errorMessage(e, t)];
      return undefined;
    } finally {
      saving.value = false;
    }
  }

  return { problems, saving, saved, save };
}
