import { describe, expect, it } from 'vitest';
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
