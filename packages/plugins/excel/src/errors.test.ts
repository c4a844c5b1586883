import { describe, expect, it } from 'vitest';
import { en, render, zhCN } from './errors';

describe('excel error messages', () => {
  it('has every code in both languages, with the same placeholders', () => {
    expect(Object.keys(zhCN).sort()).toEqual(Object.keys(en).sort());
    const params = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
    for (const [code, text] of Object.entries(en)) expect(params(zhCN[code as keyof typeof en]), code).toEqual(params(text));
  });

  it('renders parameters, lists as quoted items', () => {
    expect(render('a {x} b {y}', { x: 'one', y: ['p', 'q'] })).toBe('a one b "p", "q"');
  });
});
