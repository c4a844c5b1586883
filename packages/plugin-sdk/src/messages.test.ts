import { describe, expect, it } from 'vitest';
import { localizedErrors, messageTableProblems, renderMessage } from './messages';
import { ToolError } from './worker';

describe('plugin messages', () => {
  it('renders parameters, lists as quoted items, and leaves unknown placeholders', () => {
    expect(renderMessage('a {x} b {y} c {z} d {n}', { x: 'one', y: ['p', 'q'], n: 3 })).toBe('a one b "p", "q" c {z} d 3');
  });

  it('builds tool errors with the code, the parameters and the Chinese text', () => {
    const err = localizedErrors({ x_missing: 'No {name}.' }, { x_missing: '没有 {name}。' })('x_missing', { name: 'a' });
    expect(err).toBeInstanceOf(ToolError);
    expect(err.message).toBe('No a.');
    expect(err.data).toEqual({ code: 'x_missing', params: { name: 'a' }, messageZh: '没有 a。' });
  });

  it('names codes missing from a table and differing placeholders', () => {
    expect(messageTableProblems({ a: '{x}', b: 'b' }, { a: '{y}', c: 'c' })).toEqual(['a: placeholders differ', 'b: no Chinese message', 'c: no English message']);
    expect(messageTableProblems({ a: '{x} {y}' }, { a: '{y}{x}' })).toEqual([]);
  });
});
