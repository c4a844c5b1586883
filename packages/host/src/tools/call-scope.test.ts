import { describe, expect, it } from 'vitest';
import { CallScope, Deadlines, Stop, signalOf } from './call-scope';

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
    const run = new Stop();
    const d = new Deadlines();
    const scope = new CallScope(run, 60_000, d);
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
    const run = new Stop();
    const scope = new CallScope(run, 5, new Deadlines());
    const signal = scope.signal;
    await new Promise<void>((r) => scope.onAbort(r));
    expect(signal.aborted).toBe(true);
    expect((signal.reason as DOMException).name).toBe('TimeoutError');
    expect(scope.timedOut).toBe(true);
    expect(run.aborted).toBe(false);
  });

  it('a disposed call is not aborted by its run or its deadline', async () => {
    const run = new Stop();
    const d = new Deadlines();
    const done = new CallScope(run, 1, d);
    const told: string[] = [];
    done.onAbort(() => told.push('done'));
    done.dispose();
    expect(d.size).toBe(0);
    const live = new CallScope(run, 60_000, d);
    live.onAbort(() => told.push('live'));
    run.abort(new Error('stop'));
    expect(told).toEqual(['live']);
    expect(done.aborted).toBe(false);
    // later calls of the same (aborted) run start aborted
    const after = new CallScope(run, 60_000, d);
    expect(after.aborted).toBe(true);
    expect(d.size).toBe(0);
  });

  it('one run stop serves many calls; each call of another run stays untouched', () => {
    const a = new Stop();
    const b = new Stop();
    const d = new Deadlines();
    const scopes = Array.from({ length: 5 }, () => new CallScope(a, 60_000, d));
    const other = new CallScope(b, 60_000, d);
    a.abort(new Error('stop'));
    expect(scopes.every((s) => s.aborted)).toBe(true);
    expect(other.aborted).toBe(false);
    other.dispose();
    expect(d.size).toBe(0);
  });

  it('tells every call of a run, each once, though each call leaves the run as it aborts', () => {
    const run = new Stop();
    const d = new Deadlines();
    const scopes = Array.from({ length: 4 }, () => new CallScope(run, 60_000, d));
    const told: number[] = [];
    scopes.forEach((s, i) => s.onAbort(() => told.push(i)));
    // a call that settled before the abort is not told
    scopes[2]?.dispose();
    run.abort(new Error('stop'));
    expect(told).toEqual([0, 1, 3]);
    expect(scopes.map((s) => s.aborted)).toEqual([true, true, false, true]);
    expect(d.size).toBe(0);
  });
});

describe('Stop', () => {
  it('makes no AbortController until its signal is read; a signal read before or after the abort is aborted with its reason', () => {
    const early = new Stop();
    const late = new Stop();
    expect((early as unknown as { controller?: unknown }).controller).toBeUndefined();
    const signal = early.signal;
    let heard = 0;
    signal.addEventListener('abort', () => heard++);
    const told: string[] = [];
    early.onAbort(() => told.push('watch'));
    early.abort(new Error('first'));
    early.abort(new Error('second'));
    expect(heard).toBe(1);
    expect(told).toEqual(['watch']);
    expect(signal.aborted).toBe(true);
    expect((signal.reason as Error).message).toBe('first');
    expect((early.reason as Error).message).toBe('first');
    late.abort(new Error('gone'));
    expect((late as unknown as { controller?: unknown }).controller).toBeUndefined();
    expect(late.signal.aborted).toBe(true);
    expect((late.signal.reason as Error).message).toBe('gone');
  });

  it('a detached watcher is not told; signalOf gives a signal as it is and reads a stop\'s', () => {
    const stop = new Stop();
    const told: string[] = [];
    const detach = stop.onAbort(() => told.push('gone'));
    stop.onAbort(() => told.push('kept'));
    detach();
    stop.abort(new Error('x'));
    expect(told).toEqual(['kept']);
    const c = new AbortController();
    expect(signalOf(c.signal)).toBe(c.signal);
    expect(signalOf(undefined)).toBeUndefined();
    expect(signalOf(stop)).toBe(stop.signal);
  });
});
