import { describe, expect, it } from 'vitest';
import { CallScope, Deadlines } from './call-scope';

const fired = (label: string, log: string[]) => {
  let done!: () => void;
  const promise = new Promise<void>((r) => {
    done = r;
  });
  return {
    promise,
    fire: () => {
      log.push(label);
      done();
    },
  };
};

describe('Deadlines', () => {
  it('fires each deadline once, in order, on one timer', async () => {
    const d = new Deadlines();
    const log: string[] = [];
    const a = fired('a', log);
    const b = fired('b', log);
    d.add(30, b.fire);
    d.add(5, a.fire);
    await b.promise;
    expect(log).toEqual(['a', 'b']);
    expect(d.size).toBe(0);
  });

  it('never fires a removed deadline, even when its timer was armed for it', async () => {
    const d = new Deadlines();
    const log: string[] = [];
    const a = fired('a', log);
    const b = fired('b', log);
    const first = d.add(5, a.fire);
    d.add(40, b.fire);
    d.remove(first);
    // the timer armed for `a` fires, finds nothing due and re-arms for `b`
    await b.promise;
    expect(log).toEqual(['b']);
  });

  it('re-arms for an earlier deadline added after a later one', async () => {
    const d = new Deadlines();
    const log: string[] = [];
    const late = d.add(3_600_000, () => log.push('late'));
    const soon = fired('soon', log);
    d.add(5, soon.fire);
    await soon.promise;
    expect(log).toEqual(['soon']);
    d.remove(late);
    expect(d.size).toBe(0);
  });

  it('keeps firing the others when one callback throws', async () => {
    const d = new Deadlines();
    const log: string[] = [];
    const b = fired('b', log);
    d.add(1, () => {
      throw new Error('boom');
    });
    d.add(1, b.fire);
    await b.promise;
    expect(log).toEqual(['b']);
  });
});

describe('CallScope', () => {
  it('is aborted by its run, tells its subscribers once and makes its signal already aborted', () => {
    const run = new AbortController();
    const d = new Deadlines();
    const scope = new CallScope(run.signal, 60_000, d);
    const told: string[] = [];
    scope.onAbort(() => told.push('one'));
    const detach = scope.onAbort(() => told.push('detached'));
    detach();
    run.abort(new Error('stop'));
    run.abort(new Error('again'));
    expect(told).toEqual(['one']);
    expect(scope.aborted).toBe(true);
    expect(scope.timedOut).toBe(false);
    expect((scope.reason as Error).message).toBe('stop');
    // a signal read after the abort is aborted with the same reason
    expect(scope.signal.aborted).toBe(true);
    expect((scope.signal.reason as Error).message).toBe('stop');
    // its deadline was released
    expect(d.size).toBe(0);
    // a subscriber after the abort is told at once
    scope.onAbort(() => told.push('late'));
    expect(told).toEqual(['one', 'late']);
  });

  it('aborts a signal read before the abort, and times out with a TimeoutError', async () => {
    const run = new AbortController();
    const scope = new CallScope(run.signal, 5, new Deadlines());
    const signal = scope.signal;
    await new Promise<void>((r) => scope.onAbort(r));
    expect(signal.aborted).toBe(true);
    expect((signal.reason as DOMException).name).toBe('TimeoutError');
    expect(scope.timedOut).toBe(true);
    expect(run.signal.aborted).toBe(false);
  });

  it('a disposed call is not aborted by its run or its deadline', async () => {
    const run = new AbortController();
    const d = new Deadlines();
    const done = new CallScope(run.signal, 1, d);
    const told: string[] = [];
    done.onAbort(() => told.push('done'));
    done.dispose();
    expect(d.size).toBe(0);
    const live = new CallScope(run.signal, 60_000, d);
    live.onAbort(() => told.push('live'));
    run.abort();
    expect(told).toEqual(['live']);
    expect(done.aborted).toBe(false);
    // later calls of the same (aborted) run start aborted
    const after = new CallScope(run.signal, 60_000, d);
    expect(after.aborted).toBe(true);
    expect(d.size).toBe(0);
  });

  it('one run signal serves many calls; each call of another run stays untouched', () => {
    const a = new AbortController();
    const b = new AbortController();
    const d = new Deadlines();
    const scopes = Array.from({ length: 5 }, () => new CallScope(a.signal, 60_000, d));
    const other = new CallScope(b.signal, 60_000, d);
    a.abort();
    expect(scopes.every((s) => s.aborted)).toBe(true);
    expect(other.aborted).toBe(false);
    other.dispose();
    expect(d.size).toBe(0);
  });
});
