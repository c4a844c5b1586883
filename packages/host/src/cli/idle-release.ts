import { performance } from 'node:perf_hooks';
import { getHeapSpaceStatistics, getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Gives memory back once a served host turns idle after a burst of work.
 *
 * V8 grows its heap under load (the young generation to 2 × 16 MB, the old generation with
 * garbage awaiting its next major collection) and keeps it while nothing allocates: an idle host
 * sat at the RSS its last burst left. When the event loop has been quiet for 2 s and the heap has
 * grown by 16 MB since the last release, the host runs one full collection (the old generation's
 * garbage). After 30 s more of quiet it runs a second one: V8 shrinks the young generation after
 * a collection that sees a low allocation rate over its last 5 s, which the first one, so close to
 * the burst, does not. The young generation then grows again with the next burst, as after a
 * start (≈ 10 % more CPU for a burst of a few seconds), which is why that step waits for a long
 * quiet spell. Work resuming in between cancels the second step. Both collections run only while
 * the loop is otherwise idle.
 */

export interface IdleReleasePolicy {
  /** a tick whose event-loop utilization is below this is quiet */
  quietUtilization: number;
  /** quiet ticks before the first collection */
  quietTicks: number;
  /** further quiet ticks before the second collection (longer than V8's 5 s allocation-rate window) */
  settleTicks: number;
  /** committed heap growth over the size after the last release that makes a release worth it */
  minGrowthBytes: number;
  /** a young generation committed above this after the second collection was not given back: try again */
  youngShrunkBytes: number;
  /** second collections tried per release at most */
  maxAttempts: number;
}

export const DEFAULT_IDLE_RELEASE: IdleReleasePolicy = { quietUtilization: 0.05, quietTicks: 2, settleTicks: 30, minGrowthBytes: 16 * 1024 * 1024, youngShrunkBytes: 4 * 1024 * 1024, maxAttempts: 3 };

export interface IdleReleaseState {
  /** watching: for a quiet spell after growth; settling: between the two collections; checking: the second has just run */
  phase: 'watching' | 'settling' | 'checking';
  /** consecutive quiet ticks in this phase */
  quiet: number;
  /** second collections tried in this release */
  attempts: number;
  /** committed heap bytes after the last release (0 before the first: the start is a burst too) */
  baseline: number;
}

export interface IdleSample {
  /** event-loop utilization over the last tick, 0..1 */
  utilization: number;
  /** the heap's committed bytes now */
  heapBytes: number;
}

export const initialIdleRelease = (): IdleReleaseState => ({ phase: 'watching', quiet: 0, attempts: 0, baseline: 0 });

/** One tick: the next state, and whether to run a full collection now. */
export function idleReleaseStep(state: IdleReleaseState, sample: IdleSample, policy: IdleReleasePolicy = DEFAULT_IDLE_RELEASE): { state: IdleReleaseState; collect: boolean } {
  const baseline = state.baseline;
  const quiet = sample.utilization < policy.quietUtilization ? state.quiet + 1 : 0;
  if (state.phase === 'settling') {
    if (quiet === 0) return { state: { phase: 'watching', quiet: 0, attempts: 0, baseline }, collect: false };
    if (quiet >= policy.settleTicks) return { state: { phase: 'checking', quiet: 0, attempts: state.attempts + 1, baseline }, collect: true };
    return { state: { ...state, quiet, baseline }, collect: false };
  }
  if (quiet >= policy.quietTicks && sample.heapBytes > baseline + policy.minGrowthBytes) return { state: { phase: 'settling', quiet: 0, attempts: 0, baseline }, collect: true };
  return { state: { phase: 'watching', quiet, attempts: 0, baseline }, collect: false };
}

/**
 * After a collection, with the heap's committed bytes and its young generation's: a second
 * collection that left the young generation large is tried again after another quiet spell (at
 * most `maxAttempts` in all); a release that ended measures later growth from the heap it left.
 */
export function afterCollection(state: IdleReleaseState, heap: { heapBytes: number; youngBytes: number }, policy: IdleReleasePolicy = DEFAULT_IDLE_RELEASE): IdleReleaseState {
  if (state.phase !== 'checking') return state;
  if (heap.youngBytes > policy.youngShrunkBytes && state.attempts < policy.maxAttempts) return { ...state, phase: 'settling', quiet: 0 };
  return { phase: 'watching', quiet: 0, attempts: 0, baseline: heap.heapBytes };
}

/**
 * V8's full collection. Node exposes it only with `--expose-gc`; set at run time, the flag adds
 * `gc` to contexts made after it, so a fresh context hands it over without putting `gc` on this
 * process's global object (contexts and worker threads made later would see it too; the host runs
 * no user code in either). Undefined where the runtime refuses (the release is then off).
 */
export function fullCollection(): (() => void) | undefined {
  try {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('typeof gc === "function" ? gc : undefined') as (() => void) | undefined;
    return typeof gc === 'function' ? gc : undefined;
  } catch {
    return undefined;
  }
}

function heapNow(): { heapBytes: number; youngBytes: number } {
  const young = getHeapSpaceStatistics().find((s) => s.space_name === 'new_space');
  return { heapBytes: getHeapStatistics().total_heap_size, youngBytes: young?.physical_space_size ?? 0 };
}

/** Starts the idle release on a timer that never keeps the process alive; returns its stop. */
export function startIdleRelease(options: { everyMs?: number; policy?: IdleReleasePolicy; collect?: () => void } = {}): () => void {
  const collect = options.collect ?? fullCollection();
  if (!collect) return () => {};
  let state = initialIdleRelease();
  let last = performance.eventLoopUtilization();
  const timer = setInterval(() => {
    const now = performance.eventLoopUtilization();
    const utilization = performance.eventLoopUtilization(now, last).utilization;
    last = now;
    const next = idleReleaseStep(state, { utilization, heapBytes: getHeapStatistics().total_heap_size }, options.policy);
    state = next.state;
    if (next.collect) {
      collect();
      state = afterCollection(state, heapNow(), options.policy);
      // the collection's own time is not work: the next tick measures from here
      last = performance.eventLoopUtilization();
    }
  }, options.everyMs ?? 1000);
  timer.unref();
  return () => clearInterval(timer);
}
