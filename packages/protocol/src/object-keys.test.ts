import { describe, expect, it } from 'vitest';
import { findForbiddenKey, PROTOTYPE_KEYS } from './object-keys';

describe('findForbiddenKey', () => {
  it('names the key and its path at any depth', () => {
    expect(findForbiddenKey(JSON.parse('{"__proto__":{"x":1}}'), PROTOTYPE_KEYS)).toEqual({ key: '__proto__', path: '__proto__' });
    expect(findForbiddenKey({ a: { constructor: { prototype: { x: 1 } } } }, PROTOTYPE_KEYS)).toEqual({ key: 'constructor', path: 'a.constructor' });
    expect(findForbiddenKey({ hooks: [{ name: 'h' }, { prototype: 1 }] }, PROTOTYPE_KEYS)).toEqual({ key: 'prototype', path: 'hooks[1].prototype' });
    expect(findForbiddenKey({ mcpServers: { 'my server': { env: { constructor: 'x' } } } }, PROTOTYPE_KEYS)).toEqual({ key: 'constructor', path: 'mcpServers["my server"].env.constructor' });
    expect(findForbiddenKey([[{ __proto__: null, ok: 1 }], JSON.parse('[{"__proto__":1}]')], ['__proto__'])?.path).toBe('[1][0].__proto__');
  });

  it('passes documents without them, including the words as values and inherited names', () => {
    expect(findForbiddenKey({ a: 'constructor', b: ['prototype', '__proto__'], c: { toString: 1, constructorName: 2 } }, PROTOTYPE_KEYS)).toBeUndefined();
    expect(findForbiddenKey({ constructor: 1 }, ['__proto__'])).toBeUndefined();
    expect(findForbiddenKey(null, PROTOTYPE_KEYS)).toBeUndefined();
  });

  it('walks deep documents without recursion', () => {
    let deep: unknown = { constructor: 1 };
    for (let i = 0; i < 100_000; i++) deep = { d: deep };
    expect(findForbiddenKey(deep, PROTOTYPE_KEYS)?.key).toBe('constructor');
  });
});
