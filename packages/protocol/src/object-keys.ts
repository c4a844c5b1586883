/**
 * Keys that reach an object's prototype machinery when a document is merged or assigned into
 * plain objects (`__proto__` replaces the prototype; `constructor.prototype` reaches the shared
 * one). Every JSON body refuses `__proto__`; documents merged into stored state (settings)
 * refuse all three. No I/O here.
 */
export const PROTOTYPE_KEYS: readonly string[] = ['__proto__', 'constructor', 'prototype'];

/**
 * A refused key and where it sits, as `a.b[2].key` (the root's own keys are bare), for a
 * localized error that names the field.
 */
export interface ForbiddenKey {
  /** The refused key itself (one of the keys searched for). */
  key: string;
  /** Where it sits: `a.b[2].key`; keys that are not identifiers are quoted (`a["x-y"]`). */
  path: string;
}

/** Keys written bare in a path (identifier-like); others are written as `["…"]`. */
const SIMPLE_KEY = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/** The path of a child key or index under `parent` (`''` is the root). */
function childPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  const part = SIMPLE_KEY.test(key) ? key : JSON.stringify(key);
  return parent === '' ? part : SIMPLE_KEY.test(key) ? `${parent}.${part}` : `${parent}[${part}]`;
}

/**
 * The first own key of `keys` found at any depth of a parsed JSON value (iterative: no
 * recursion limit), searched depth first in document order; undefined when there is none.
 * Array items are searched too; primitives have no keys.
 */
export function findForbiddenKey(value: unknown, keys: readonly string[]): ForbiddenKey | undefined {
  const stack: Array<{ v: unknown; path: string }> = [{ v: value, path: '' }];
  while (stack.length > 0) {
    const { v, path } = stack.pop() as { v: unknown; path: string };
    if (v === null || typeof v !== 'object') continue;
    if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: childPath(path, i) });
      continue;
    }
    for (const k of keys) if (Object.hasOwn(v, k)) return { key: k, path: childPath(path, k) };
    const entries = Object.entries(v);
    for (let i = entries.length - 1; i >= 0; i--) {
      const [k, child] = entries[i] as [string, unknown];
      if (child !== null && typeof child === 'object') stack.push({ v: child, path: childPath(path, k) });
    }
  }
  return undefined;
}
