import { spawn } from 'node:child_process';
import { join } from 'node:path';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { afterCollection, DEFAULT_IDLE_RELEASE, type IdleReleaseState, type IdleSample, idleReleaseStep, initialIdleRelease } from './idle-release';

const MB = 1024 * 1024;
const busy = (heapMb: number): IdleSample => ({ utilization: 0.9, heapBytes: heapMb * MB });
const quiet = (heapMb: number): IdleSample => ({ utilization: 0.001, heapBytes: heapMb * MB });

const POLICY = { ...DEFAULT_IDLE_RELEASE, settleTicks: 6 };

/** The state once a release has left the heap at `heapMb`. */
const after = (heapMb: number): IdleReleaseState => ({ ...initialIdleRelease(), baseline: heapMb * MB });

/** Feeds samples in order (a tick that collects leaves the heap at its sample's size); the indexes of the ticks that collected. */
function collections(samples: IdleSample[], state: IdleReleaseState = after(40)): number[] {
  const out: number[] = [];
  samples.forEach((s, i) => {
    const next = idleReleaseStep(state, s, POLICY);
    state = next.state;
    if (next.collect) {
      out.push(i);
      state = afterCollection(state, { heapBytes: s.heapBytes, youngBytes: 1 * MB }, POLICY);
    }
  });
  return out;
}

describe('idle release: when an idle host collects (second step after 6 quiet ticks here; 30 by default)', () => {
  it('releases after the start (a burst too) once the host is quiet', () => {
    expect(collections([quiet(60), quiet(60), ...Array.from({ length: 6 }, () => quiet(35))], initialIdleRelease())).toEqual([1, 7]);
  });

  it('after a burst that grew the heap: one collection once quiet, a second once quiet for longer, then none', () => {
    const samples = [quiet(40), busy(60), busy(80), quiet(80), quiet(80), ...Array.from({ length: 6 }, () => quiet(60)), ...Array.from({ length: 20 }, () => quiet(35))];
    // ticks 3 and 4 quiet → first collection at 4; six further quiet ticks → second at 10; none after
    expect(collections(samples)).toEqual([4, 10]);
  });

  it('by default the second step waits for 30 quiet ticks after the first', () => {
    let state = after(40);
    const at: number[] = [];
    [busy(80), ...Array.from({ length: 40 }, () => quiet(70))].forEach((s, i) => {
      const next = idleReleaseStep(state, s);
      state = next.collect ? afterCollection(next.state, { heapBytes: s.heapBytes, youngBytes: 1 * MB }) : next.state;
      if (next.collect) at.push(i);
    });
    expect(at).toEqual([2, 32]);
  });

  it('never collects on a busy tick, however large the heap', () => {
    expect(collections(Array.from({ length: 50 }, (_, i) => busy(40 + i * 10)))).toEqual([]);
  });

  it('never collects when the heap has not grown past the margin, however long the host idles', () => {
    const margin = DEFAULT_IDLE_RELEASE.minGrowthBytes / MB;
    expect(collections([quiet(40), busy(40 + margin - 1), ...Array.from({ length: 30 }, () => quiet(40 + margin - 1))])).toEqual([]);
  });

  it('work resuming between the two collections cancels the second; the next quiet spell starts over', () => {
    const samples = [quiet(40), busy(80), quiet(80), quiet(80), quiet(70), busy(90), busy(90), quiet(90), quiet(90), ...Array.from({ length: 6 }, () => quiet(70))];
    // first at 3; work at 5 cancels the second; quiet again at 7, 8 → first at 8 (heap still 50 MB over the start), second at 14
    expect(collections(samples)).toEqual([3, 8, 14]);
  });

  it('measures growth from the heap after the last release, not from the start', () => {
    const release = [quiet(40), busy(80), quiet(80), quiet(80), ...Array.from({ length: 6 }, () => quiet(30))];
    const first = collections(release);
    expect(first).toEqual([3, 9]);
    // after the release the heap is 30 MB: 44 MB is within the margin, 50 MB is not
    expect(collections([...release, busy(44), quiet(44), quiet(44), quiet(44)])).toEqual([3, 9]);
    expect(collections([...release, busy(50), quiet(50), quiet(50)])).toEqual([3, 9, 12]);
  });

  it('a second collection that left the young generation large is tried again after another quiet spell, at most three times', () => {
    let state = after(40);
    const ticks: number[] = [];
    const feed = (samples: IdleSample[], youngMb: number) => {
      for (const s of samples) {
        const next = idleReleaseStep(state, s, POLICY);
        state = next.state;
        if (next.collect) {
          ticks.push(ticks.length);
          state = afterCollection(state, { heapBytes: s.heapBytes, youngBytes: youngMb * MB }, POLICY);
        }
      }
    };
    feed([quiet(40), busy(80), quiet(80), quiet(80)], 32); // first collection
    feed(Array.from({ length: 6 }, () => quiet(70)), 32); // second: young generation still 32 MB
    expect(state.phase).toBe('settling');
    feed(Array.from({ length: 6 }, () => quiet(70)), 32); // third: still large
    feed(Array.from({ length: 6 }, () => quiet(70)), 32); // fourth: the last attempt
    expect(ticks.length).toBe(4);
    expect(state).toEqual({ phase: 'watching', quiet: 0, attempts: 0, baseline: 70 * MB });
    feed(Array.from({ length: 30 }, () => quiet(70)), 32); // no more while the heap does not grow
    expect(ticks.length).toBe(4);
    // a retry that gives the young generation back ends the release at once
    state = after(40);
    ticks.length = 0;
    feed([quiet(40), busy(80), quiet(80), quiet(80), ...Array.from({ length: 6 }, () => quiet(70))], 32);
    feed(Array.from({ length: 6 }, () => quiet(38)), 1);
    expect(ticks.length).toBe(3);
    expect(state).toEqual({ phase: 'watching', quiet: 0, attempts: 0, baseline: 38 * MB });
  });

  it('property: every collection follows at least the policy quiet ticks, and no tick that collects is busy', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ utilization: fc.double({ min: 0, max: 1, noNaN: true }), heapBytes: fc.integer({ min: 0, max: 512 * MB }) }), { maxLength: 200 }), (samples) => {
        let state = initialIdleRelease();
        let run = 0;
        for (const s of samples) {
          run = s.utilization < DEFAULT_IDLE_RELEASE.quietUtilization ? run + 1 : 0;
          const next = idleReleaseStep(state, s);
          if (next.collect) {
            expect(s.utilization).toBeLessThan(DEFAULT_IDLE_RELEASE.quietUtilization);
            expect(run).toBeGreaterThanOrEqual(DEFAULT_IDLE_RELEASE.quietTicks);
          }
          state = next.collect ? afterCollection(next.state, { heapBytes: s.heapBytes, youngBytes: 0 }) : next.state;
        }
      }),
    );
  });
});

/** A child process that grows its young generation with a burst, starts the release and idles. */
const CHILD = `
import { getHeapSpaceStatistics } from 'node:v8';
import { DEFAULT_IDLE_RELEASE, fullCollection, startIdleRelease } from ${JSON.stringify(join(import.meta.dirname, 'idle-release.ts'))};
const young = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').physical_space_size;
const gc = fullCollection();
let collected = 0;
const stop = startIdleRelease({ collect: () => { collected++; gc(); }, policy: { ...DEFAULT_IDLE_RELEASE, settleTicks: 6 } });
let after = 0;
let poll;
// the burst once the release has taken its first measure of the heap
setTimeout(() => {
  let keep = [];
  for (let i = 0; i < 3e6; i++) { keep.push({ i, s: 'x' + i }); if (keep.length > 50000) keep = []; }
  keep = null;
  after = young();
  poll = setInterval(() => {
    if (young() < after / 4) end();
  }, 200);
}, 1500);
// not given back within 40 s: report what there is (the test then fails on it)
const limit = setTimeout(() => end(), 40_000);
function end() { clearInterval(poll); clearTimeout(limit); stop(); console.log(JSON.stringify({ after, now: young(), collected })); }
`;

describe('idle release in a real process', () => {
  it('gives the young generation back after a burst, with two collections', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CHILD], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.setEncoding('utf8').on('data', (c: string) => (out += c));
    child.stderr.setEncoding('utf8').on('data', (c: string) => (err += c));
    const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
    expect(err).toBe('');
    expect(code).toBe(0);
    const result = JSON.parse(out) as { after: number; now: number; collected: number };
    expect(result.after).toBeGreaterThan(8 * MB);
    expect(result.now).toBeLessThan(result.after / 4);
    expect(result.collected).toBe(2);
  }, 60_000);
});
