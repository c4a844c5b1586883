import { describe, expect, it } from 'vitest';
import { exactTime, relativeTime } from './time';

const now = Date.parse('2026-12-03T12:00:00Z');
const ago = (seconds: number) => new Date(now - seconds * 1000).toISOString();

describe('relative times', () => {
  it('reads naturally in English and Chinese', () => {
    expect(relativeTime(ago(3), now, 'en')).toBe('now');
    expect(relativeTime(ago(5 * 60), now, 'en')).toBe('5 minutes ago');
    expect(relativeTime(ago(3 * 3600), now, 'en')).toBe('3 hours ago');
    expect(relativeTime(ago(26 * 3600), now, 'en')).toBe('yesterday');
    expect(relativeTime(ago(5 * 60), now, 'zh-CN')).toBe('5分钟前');
    expect(relativeTime(new Date(now + 2 * 3600 * 1000).toISOString(), now, 'en')).toBe('in 2 hours');
  });

  it('gives the exact time for the hover title, and nothing for a bad value', () => {
    expect(exactTime(ago(0), 'en')).toMatch(/2026/);
    expect(relativeTime('not a time', now, 'en')).toBe('');
  });
});
