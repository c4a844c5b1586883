import * as approvals from './approvals';
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
import * as schema from './schema';
import * as secrets from './secrets';
import * as tasks from './tasks';
import * as tools from './tools';
import * as unattended from './unattended';
import * as webhooks from './webhooks';
import * as workflows from './workflows';

/** Supported display languages. `en` is the default. */
export const LOCALES = ['en', 'zh-CN'] as const;
export type Locale = (typeof LOCALES)[number];

const tables = [core, flow, plugins, permissions, workflows, models, mcp, unattended, schedules, tasks, webhooks, browser, portability, failure, inbox, secrets, schema, tools, approvals];

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

/**
 * A parameter rendered in the message's own language: a message of the tables (`$message` with
 * its own params), or a text given per language (`$texts`, English the fallback). Problems carry
 * these so that a surface in any language renders them; they are plain JSON.
 */
export type LocalText = { $message: string; params?: Record<string, unknown> } | { $texts: { en: string } & Partial<Record<Locale, string>> };

/** True for a `LocalText` parameter value. */
export function isLocalText(v: unknown): v is LocalText {
  if (!v || typeof v !== 'object' || Array.isArray(v)) return false;
  const o = v as Record<string, unknown>;
  return typeof o.$message === 'string' || (!!o.$texts && typeof o.$texts === 'object' && typeof (o.$texts as { en?: unknown }).en === 'string');
}

/** A parameter value as text in `locale` (a `LocalText` rendered, a string as is, anything else JSON). */
export function paramText(v: unknown, locale: Locale): string {
  if (typeof v === 'string') return v;
  if (isLocalText(v)) return '$message' in v ? localize(v.$message, v.params ?? {}, locale) : (v.$texts[locale] ?? v.$texts.en);
  if (Array.isArray(v) && v.length > 0 && v.every(isLocalText)) return v.map((x) => paramText(x, locale)).join(' ');
  return JSON.stringify(v);
}

/**
 * Fills `{param}` placeholders; a `LocalText` value is rendered in `locale`, another non-string
 * value is JSON. A placeholder without its parameter is dropped with the space before it (never
 * shown raw to a person); tests over the tables check every message gets its parameters.
 */
export function renderTemplate(template: string, params: Record<string, unknown>, locale: Locale = 'en'): string {
  return template.replace(/ ?\{(\w+)\}/g, (whole, key: string) => {
    if (!(key in params) || params[key] === undefined) return '';
    const lead = whole.startsWith(' ') ? ' ' : '';
    return lead + paramText(params[key], locale);
  });
}

/** The message for `code` in `locale`, with `{param}` placeholders filled. */
export function localize(code: string, params: Record<string, unknown> = {}, locale: Locale = 'en'): string {
  const template = MESSAGES[locale][code] ?? MESSAGES.en[code];
  if (!template) return params.reason ? paramText(params.reason, locale) : code;
  return renderTemplate(template, params, locale);
}
