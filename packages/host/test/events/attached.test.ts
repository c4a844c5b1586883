import { describe, expect, it } from 'vitest';
import { attached } from '../../src/events/attached';

/**
 * A value attached to an object behaves as a WeakMap entry: read back by identity only, one per
 * attachment, and invisible to everything that reads the object (its keys, spreads, JSON, a
 * structured clone, equality), frozen objects included.
 */
describe('a value attached to an object', () => {
  it('is read back from that object only, and replaced by a later set', () => {
    const texts = attached<object, string>();
    const a = { type: 'audit' };
    const b = { type: 'audit' };
    expect(texts.has(a)).toBe(false);
    expect(texts.get(a)).toBeUndefined();
    expect(texts.set(a, 'one')).toBe(texts);
    expect(texts.get(a)).toBe('one');
    expect(texts.has(a)).toBe(true);
    expect(texts.has(b)).toBe(false);
    expect(texts.get({ ...a })).toBeUndefined();
    texts.set(a, 'two');
    expect(texts.get(a)).toBe('two');
    texts.set(b, '');
    expect(texts.has(b)).toBe(true);
    expect(texts.get(b)).toBe('');
  });

  it('keeps one value per attachment on the same object', () => {
    const first = attached<object, string>();
    const second = attached<object, string>();
    const e = { seq: 1 };
    first.set(e, 'payload');
    expect(second.has(e)).toBe(false);
    second.set(e, 'frame');
    expect(first.get(e)).toBe('payload');
    expect(second.get(e)).toBe('frame');
  });

  it('leaves what the object shows unchanged: keys, spread, JSON, clone, equality, prototype', () => {
    const texts = attached<object, string>();
    const e = JSON.parse('{"type":"tool","__proto__":{"x":1},"n":[1,2]}') as object;
    const before = { keys: Reflect.ownKeys(e), json: JSON.stringify(e), proto: Object.getPrototypeOf(e) };
    texts.set(e, 'text');
    expect(Reflect.ownKeys(e)).toEqual(before.keys);
    expect(Object.getOwnPropertySymbols(e)).toEqual([]);
    expect(JSON.stringify(e)).toBe(before.json);
    expect(Object.getPrototypeOf(e)).toBe(before.proto);
    expect(Object.isExtensible(e)).toBe(true);
    const copy = { ...e };
    expect(texts.has(copy)).toBe(false);
    expect(Reflect.ownKeys(copy)).toEqual(before.keys);
    expect(structuredClone(e)).toEqual(JSON.parse(before.json));
    expect(e).toEqual(JSON.parse(before.json));
    expect(e).toStrictEqual(JSON.parse(before.json));
  });

  it('attaches to frozen and non-extensible objects too, without changing them', () => {
    const texts = attached<object, string>();
    const frozen = Object.freeze({ type: 'audit' });
    const sealed = Object.preventExtensions({ type: 'tool' });
    texts.set(frozen, 'f').set(sealed, 's');
    expect(texts.get(frozen)).toBe('f');
    expect(texts.get(sealed)).toBe('s');
    texts.set(frozen, 'g');
    expect(texts.get(frozen)).toBe('g');
    expect(Object.isFrozen(frozen)).toBe(true);
    expect(Object.isExtensible(sealed)).toBe(false);
    expect(texts.has({ type: 'audit' })).toBe(false);
  });
});
