import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { dateTime, exactTime, refreshAfterMs, relativeTime } from './time';

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

  it('formats a date and time for the UI language, never as a raw ISO string', () => {
    const iso = '2026-12-03T12:00:00.000Z';
    for (const locale of ['en', 'zh-CN']) {
      const text = dateTime(iso, locale);
      expect(text).toMatch(/2026/);
      expect(text).not.toContain('T12:00');
      expect(text).not.toContain('Z');
    }
    expect(dateTime(iso, 'zh-CN')).toMatch(/年|\//);
    expect(dateTime('not a time', 'en')).toBe('');
  });

  it('refreshes a label before it goes stale: within a second under a minute', () => {
    expect(refreshAfterMs(ago(14), now)).toBe(1000);
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 400 * 24 * 3600 }), (seconds) => {
        const wait = refreshAfterMs(ago(seconds), now);
        // the label's smallest unit at this age is never shorter than the wait
        const unit = seconds < 60 ? 1000 : seconds < 3600 ? 60_000 : 3_600_000;
        expect(wait).toBeGreaterThan(0);
        expect(wait).toBeLessThanOrEqual(unit);
      }),
    );
  });
});

