import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CRASH_POINTS, crashPointFor, parseCrashAt } from './crash-points';
import { loadConfig } from './config';

describe('FENGYU_CRASH_AT', () => {
  it('parses <point>[:<n>] for every point, n defaulting to 1', () => {
    for (const p of CRASH_POINTS) {
      expect(parseCrashAt(p)).toEqual({ point: p, n: 1 });
      expect(parseCrashAt(`${p}:7`)).toEqual({ point: p, n: 7 });
    }
    expect(loadConfig({ env: { FENGYU_CRASH_AT: 'step-commit:3' } }).crashAt).toEqual({ point: 'step-commit', n: 3 });
    expect(loadConfig({ env: {} }).crashAt).toBeUndefined();
  });

  it('an unknown point or a bad count stops start-up with an error naming the value and the points', () => {
    for (const bad of ['nope', 'step-commit:0', 'step-commit:', 'step-commit:x', 'STEP-COMMIT', ':2', '']) {
      expect(() => loadConfig({ env: { FENGYU_CRASH_AT: bad || ' ' } }), bad).toThrow(/FENGYU_CRASH_AT/);
    }
    expect(() => parseCrashAt('nope')).toThrow(/run-event-append, step-commit/);
  });

  it('kills exactly at the n-th pass of its own point, never at another', () => {
    fc.assert(
      fc.property(fc.constantFrom(...CRASH_POINTS), fc.integer({ min: 1, max: 20 }), fc.array(fc.constantFrom(...CRASH_POINTS), { maxLength: 60 }), (point, n, passes) => {
        let killedAt = -1;
        let kills = 0;
        const crash = crashPointFor({ point, n }, () => {
          kills += 1;
          if (killedAt < 0) killedAt = i;
        });
        let i = 0;
        for (; i < passes.length; i++) crash?.(passes[i] as (typeof CRASH_POINTS)[number]);
        const own = passes.map((p, j) => (p === point ? j : -1)).filter((j) => j >= 0);
        expect(killedAt).toBe(own.length >= n ? own[n - 1] : -1);
        expect(kills).toBe(own.length >= n ? 1 : 0);
      }),
    );
    expect(crashPointFor(undefined)).toBeUndefined();
  });
});
