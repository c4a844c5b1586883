import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { safeFileName, userFileName } from './paths';

describe('safeFileName', () => {
  it('never yields a separator, a control character, a leading dot or more than 100 characters', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 300 }), (raw) => {
        const name = safeFileName(raw);
        expect(name.length).toBeGreaterThan(0);
        expect(name.length).toBeLessThanOrEqual(100);
        expect(name).not.toMatch(/[\\/:*?"<>|\u0000-\u001f\u007f]/);
        expect(name.startsWith('.')).toBe(false);
      }),
    );
  });

  it('keeps ordinary names and CJK text', () => {
    expect(safeFileName('North')).toBe('North');
    expect(safeFileName('华东 区')).toBe('华东 区');
    expect(safeFileName('../etc/passwd')).toBe('_etc_passwd');
    expect(safeFileName('   ')).toBe('part');
  });
});

describe('userFileName', () => {
  it('adds .xlsx and refuses paths', () => {
    expect(userFileName('merged')).toBe('merged.xlsx');
    expect(userFileName('Q1 report.xlsx')).toBe('Q1 report.xlsx');
    for (const bad of ['../x', 'a/b', '.hidden', 'a\\b', '']) expect(() => userFileName(bad)).toThrow();
  });
});
