import { describe, expect, it } from 'vitest';
import { takeTokenFromHash } from './token';

describe('token from the address', () => {
  it.each([
    ['#token=abc123', 'abc123', ''],
    ['#token=abc&x=1', 'abc', '#x=1'],
    ['#x=1', undefined, '#x=1'],
    ['', undefined, ''],
    ['#token=', undefined, ''],
    ['#token=a%2Bb', 'a+b', ''],
  ])('%s', (hash, token, rest) => {
    expect(takeTokenFromHash(hash)).toEqual({ token, rest });
  });
});
