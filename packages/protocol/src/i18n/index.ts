import * as browser from './browser';
import * as core from './core';
import * as failure from './failure';
import * as flow from './flow';
import * as inbox from './inbox';
import * as mcp from './mcp';
import * as models from './models';
import * as permissions from './permissions';
import * as plugins from './plugins';
import * as portability from './portability';
import * as schedules from './schedules';
import * as secrets from './secrets';
import * as tasks from './tasks';
import * as unattended from './unattended';
import * as webhooks from './webhooks';
import * as workflows from './workflows';

/** Supported display languages. `en` is the default. */
export const LOCALES = ['en', 'zh-CN'] as const;
export type Locale = (typeof LOCALES)[number];

const tables = [core, flow, plugins, permissions, workflows, models, mcp, unattended, schedules, tasks, webhooks, browser, portability, failure, inbox, secrets];

export const MESSAGES: Record<Locale, Record<string, string>> = {
  en: Object.assign({}, ...tables.map((t) => t.en)),
  'zh-CN': Object.assign({}, ...tables.map((t) => t.zhCN)),
};

/** Picks the locale from an Accept-Language header value (`zh`, `zh-CN`, `zh-Hans` → zh-CN). */
export function pickLocale(acceptLanguage: string | undefined | null): Locale {
  if (!acceptLanguage) return 'en';
  for (const part of acceptLanguage.split(',')) {
    const tag = part.split(';')[0]?.trim().toLowerCase() ?? '';
    if (tag.startsWith('zh')) return 'zh-CN';
    if (tag.startsWith('en')) return 'en';
  }
  return 'en';
}

/** Fills `{param}` placeholders; an unknown one stays as written, a non-string value is JSON. */
export function renderTemplate(template: string, params: Record<string, unknown>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) => {
    if (!(key in params)) return whole;
    const v = params[key];
    return typeof v === 'string' ? v : JSON.stringify(v);
  });
}

/** The message for `code` in `locale`, with `{param}` placeholders filled. */
export function localize(code: string, params: Record<string, unknown> = {}, locale: Locale = 'en'): string {
  const template = MESSAGES[locale][code] ?? MESSAGES.en[code];
  if (!template) return params.reason ? String(params.reason) : code;
  return renderTemplate(template, params);
}
