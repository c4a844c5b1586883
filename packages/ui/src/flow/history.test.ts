import { describe, expect, it } from 'vitest';
import { createHistory, HISTORY_CAP } from './history';

describe('undo history', () => {
  it('undoes and redoes in order', () => {
    const h = createHistory<{ n: number }>();
    let state = { n: 0 };
    for (let i = 1; i <= 3; i++) {
      h.record(state);
      state = { n: i };
    }
    state = h.undo(state) ?? state;
    expect(state.n).toBe(2);
    state = h.undo(state) ?? state;
    expect(state.n).toBe(1);
    state = h.redo(state) ?? state;
    expect(state.n).toBe(2);
    expect(h.canRedo).toBe(true);
  });

  it('is capped at 50 steps, dropping the oldest', () => {
    const h = createHistory<number>();
    let state = 0;
    for (let i = 1; i <= 80; i++) {
      h.record(state);
      state = i;
    }
    expect(h.size).toBe(HISTORY_CAP);
    let undone = 0;
    for (let r = h.undo(state); r !== undefined; r = h.undo(state)) {
      state = r;
      undone++;
    }
    expect(undone).toBe(50);
    expect(state).toBe(30);
  });

  it('a new edit clears the redo side', () => {
    const h = createHistory<number>();
    h.record(0);
    const back = h.undo(1);
    expect(back).toBe(0);
    h.record(0);
    expect(h.canRedo).toBe(false);
  });

  it('snapshots are copies, not shared references', () => {
    const h = createHistory<{ list: number[] }>();
    const s = { list: [1] };
    h.record(s);
    s.list.push(2);
    expect(h.undo(s)?.list).toEqual([1]);
  });
});
