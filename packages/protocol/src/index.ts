/** @fengyu/protocol — the contract as code, shared by host, UI, SDK and CLI. No I/O. */
export * from './catalog';
export * from './errors';
export * from './events';
export { LOCALES, type Locale, localize, MESSAGES, pickLocale, renderTemplate } from './i18n/index';
export * from './plan';
export * from './references';
export * from './schema-check';
export * from './validate';
export * from './manifest';
export * from './manifest-check';
export * from './object-keys';
export * from './reserved-tools';
export * from './workflow';
export * from './plan-graph';
export * from './graph-check';
