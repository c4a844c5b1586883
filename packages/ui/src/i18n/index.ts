import { createI18n } from 'vue-i18n';
import * as agent from './agent';
import * as assist from './assist';
import * as builder from './builder';
import * as chat from './chat';
import * as common from './common';
import * as control from './control';
import * as failure from './failure';
import * as flows from './flows';
import * as inbox from './inbox';
import * as memory from './memory';
import * as plugins from './plugins';
import * as portability from './portability';
import * as run from './run';
import * as runs from './runs';
import * as schedules from './schedules';
import * as settings from './settings';

/**
 * The one index of UI strings: each page owns `src/i18n/<page>.ts` with `en` and `zhCN`, merged
 * here under the page's name (`t('flows.title')`). A test checks both languages match key for key.
 */

export const LOCALES = ['en', 'zh-CN'] as const;
export type UiLocale = (typeof LOCALES)[number];

const pages = { common, flows, builder, control, failure, run, agent, runs, schedules, plugins, settings, chat, assist, inbox, portability, memory };

type Messages = Record<string, unknown>;

function merge(pick: (m: { en: Messages; zhCN: Messages }) => Messages): Messages {
  return Object.fromEntries(Object.entries(pages).map(([name, m]) => [name, pick(m as unknown as { en: Messages; zhCN: Messages })]));
}

export const MESSAGES: Record<UiLocale, Messages> = { en: merge((m) => m.en), 'zh-CN': merge((m) => m.zhCN) };

export const LOCALE_KEY = 'fengyu.locale';

export function initialLocale(storage: Storage, navigatorLanguage: string | undefined): UiLocale {
  const saved = storage.getItem(LOCALE_KEY);
  if (saved === 'en' || saved === 'zh-CN') return saved;
  return navigatorLanguage?.toLowerCase().startsWith('zh') ? 'zh-CN' : 'en';
}

export function createUiI18n(locale: UiLocale) {
  return createI18n({
    legacy: false,
    locale,
    fallbackLocale: 'en',
    messages: MESSAGES as never,
    missingWarn: false,
    fallbackWarn: false,
  });
}
