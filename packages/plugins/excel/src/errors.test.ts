import { messageTableProblems } from '@fengyu/plugin-sdk';
import { describe, expect, it } from 'vitest';
import { en, zhCN } from './errors';

describe('excel error messages', () => {
  it('has every code in both languages, with the same placeholders', () => {
    expect(messageTableProblems(en, zhCN)).toEqual([]);
  });
});
