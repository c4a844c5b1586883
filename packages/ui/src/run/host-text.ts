import { hostText, pickLocale } from '@fengyu/protocol';
import { useI18n } from 'vue-i18n';

/**
 * The host's own run texts (plain summaries, step failures, approval reasons) in the UI's
 * language; any other text (a model's summary, a tool's error) as written.
 */
export function useHostText(): (text: string | undefined | null) => string {
  const { locale } = useI18n();
  return (text) => (text ? hostText(text, pickLocale(locale.value)) : '');
}
