import { jsonClone } from './json-clone';

/**
 * The undo stack of the builder: snapshots of the document taken before each edit, capped
 * (50 by default; the oldest falls off). Pure data, no Vue: the store drives it.
 */

export interface History<T> {
  /** Call with the state *before* an edit. Clears the redo side. */
  record(before: T): void;
  /** Returns the state to restore, given the current one; undefined when nothing to undo. */
  undo(current: T): T | undefined;
  redo(current: T): T | undefined;
  readonly canUndo: boolean;
  readonly canRedo: boolean;
  readonly size: number;
  clear(): void;
}

export const HISTORY_CAP = 50;

export function createHistory<T>(cap = HISTORY_CAP, clone: (v: T) => T = (v) => jsonClone(v)): History<T> {
  let past: T[] = [];
  let future: T[] = [];
  return {
    record(before) {
      past.push(clone(before));
      if (past.length > cap) past = past.slice(past.length - cap);
      future = [];
    },
    undo(current) {
      const prev = past.pop();
      if (prev === undefined) return undefined;
      future.push(clone(current));
      return clone(prev);
    },
    redo(current) {
      const next = future.pop();
      if (next === undefined) return undefined;
      past.push(clone(current));
      return clone(next);
    },
    get canUndo() {
      return past.length > 0;
    },
    get canRedo() {
      return future.length > 0;
    },
    get size() {
      return past.length;
    },
    clear() {
      past = [];
      future = [];
    },
  };
}
