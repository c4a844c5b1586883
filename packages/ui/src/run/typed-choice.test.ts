import { describe, expect, it } from 'vitest';
import { readTypedChoice } from './typed-choice';

describe('typed recipients', () => {
  it('accepts addresses separated by commas or semicolons', () => {
    expect(readTypedChoice(' ana@example.com; bo@example.org ,')).toEqual({ ok: true, value: 'ana@example.com, bo@example.org' });
  });
  it('names every address that is not valid', () => {
    expect(readTypedChoice('ana@example.com, bo@, x y@z.com')).toEqual({ ok: false, invalid: ['bo@', 'x y@z.com'] });
  });
  it('keeps a group name as typed', () => {
    expect(readTypedChoice('managers')).toEqual({ ok: true, value: 'managers' });
  });
});
