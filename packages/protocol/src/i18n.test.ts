import { describe, expect, it } from 'vitest';
import { HOST_TEXT_CODES, hostText } from './i18n/host-text';
import { localize, MESSAGES, pickLocale } from './i18n/index';

describe('i18n tables', () => {
  it('has every message in both languages', () => {
    const en = Object.keys(MESSAGES.en).sort();
    const zh = Object.keys(MESSAGES['zh-CN']).sort();
    expect(zh).toEqual(en);
  });

  it('fills parameters and picks the locale from Accept-Language', () => {
    expect(localize('run_not_found', { runId: 'r1' }, 'en')).toBe('Run r1 was not found.');
    expect(localize('run_not_found', { runId: 'r1' }, pickLocale('zh-CN,zh;q=0.9'))).toContain('r1');
    expect(pickLocale('fr, en;q=0.5')).toBe('en');
    expect(pickLocale(undefined)).toBe('en');
  });
});

/** Han characters: a zh-CN message without any is English left untranslated. */
const HAN = /\p{Script=Han}/u;
const placeholders = (t: string) => [...t.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();

describe('every message reads in both languages, without raw placeholders', () => {
  it('translates every message of the error table into zh-CN with the same placeholders', () => {
    const untranslated = Object.entries(MESSAGES['zh-CN']).filter(([, t]) => !HAN.test(t) && !/^\{\w+\}$/.test(t));
    expect(untranslated.map(([code]) => code)).toEqual([]);
    const mismatched = Object.keys(MESSAGES.en).filter((code) => JSON.stringify(placeholders(MESSAGES.en[code] ?? '')) !== JSON.stringify(placeholders(MESSAGES['zh-CN'][code] ?? '')));
    expect(mismatched).toEqual([]);
  });

  it('never shows a {placeholder}, filled or not', () => {
    for (const locale of ['en', 'zh-CN'] as const) {
      for (const [code, template] of Object.entries(MESSAGES[locale])) {
        const filled = Object.fromEntries(placeholders(template).map((p) => [p, 'X']));
        expect(localize(code, filled, locale), code).not.toMatch(/\{\w+\}/);
        expect(localize(code, {}, locale), code).not.toMatch(/\{\w+\}/);
      }
    }
    expect(localize('invalid_plan', {}, 'en')).toBe('The workflow is invalid: problem(s) found.');
  });

  it('renders a nested message or per-language text in the message’s language', () => {
    const reason = { $message: 'schema_required', params: { field: { $texts: { en: 'Workbook', 'zh-CN': '工作簿' } } } };
    expect(localize('step_invalid_arguments', { stepId: 'a', reason }, 'en')).toBe('Step "a": Workbook is required.');
    expect(localize('step_invalid_arguments', { stepId: 'a', reason }, 'zh-CN')).toBe('步骤 "a"：“工作簿”为必填项。');
    // a value that only looks like one stays data
    expect(localize('tool_failed', { name: 't', reason: { $message: 5 } }, 'en')).toBe('Tool "t" failed: {"$message":5}');
  });
});

describe('the host’s run texts in zh-CN', () => {
  it('says any message of the tables the host wrote in English (a tool error inside a step failure) in Chinese', () => {
    const inner = localize('path_not_granted', { path: '/tmp/x.csv' }, 'en');
    const written = localize('run_failed_step', { stepId: 's', reason: inner }, 'en');
    expect(hostText(written, 'zh-CN')).toBe(localize('run_failed_step', { stepId: 's', reason: localize('path_not_granted', { path: '/tmp/x.csv' }, 'zh-CN') }, 'zh-CN'));
    const english: string[] = [];
    for (const [code, template] of Object.entries(MESSAGES.en)) {
      if (template.replace(/\{\w+\}/g, '').length < 8) continue;
      const params = Object.fromEntries(placeholders(template).map((p) => [p, p === 'count' ? '4' : `v-${p}`]));
      if (!HAN.test(hostText(localize(code, params, 'en'), 'zh-CN'))) english.push(code);
    }
    expect(english).toEqual([]);
    // words that are no message stay as written
    expect(hostText('The model says: done.', 'zh-CN')).toBe('The model says: done.');
  });

  it('says every run summary, step failure and approval reason the host writes in Chinese', () => {
    for (const code of HOST_TEXT_CODES) {
      const params = Object.fromEntries(placeholders(MESSAGES.en[code] ?? '').map((p) => [p, p === 'count' ? '4' : `v-${p}`]));
      const written = localize(code, params, 'en');
      const shown = hostText(written, 'zh-CN');
      expect(shown, code).toBe(localize(code, params, 'zh-CN'));
      expect(HAN.test(shown), code).toBe(true);
    }
    expect(hostText('Completed 4 step(s) for: split the sales workbook.', 'zh-CN')).toBe('已完成 4 个步骤，目标：split the sales workbook。');
    expect(hostText('Step "send" failed: Tool "email_send_batch" timed out after 30 s.', 'zh-CN')).toBe('步骤“send”失败：工具 "email_send_batch" 在 30 秒后超时。'.replace('工具 "email_send_batch" 在 30 秒后超时。', localize('tool_timeout', { name: 'email_send_batch', seconds: '30' }, 'zh-CN')));
    expect(hostText('ask mode: write tools need approval', 'zh-CN')).toBe('ask 模式：write 类工具需要审批');
    // a model's own summary and English in an English UI stay as written
    expect(hostText('Sent 12 e-mails to the regional managers.', 'zh-CN')).toBe('Sent 12 e-mails to the regional managers.');
    expect(hostText('Completed 4 step(s).', 'en')).toBe('Completed 4 step(s).');
  });
});
