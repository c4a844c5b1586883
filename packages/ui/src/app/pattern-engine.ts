import { linearEngineReady, loadLinearEngine } from '@fengyu/protocol';
import { type Ref, readonly, ref } from 'vue';

/**
 * The RE2 engine of schema patterns, loaded on first need (its own chunk, ≈ 46 KB gzip, that the
 * first screen does not load). The views that check values against schemas (the builder's
 * problems, the schedule form) ask for it when they open and read `patternEngineReady` in their
 * checks, so a check made before it arrived is made again: until then a schema with a `pattern`
 * is not checked yet (protocol caches nothing about it); afterwards every check is the host's.
 */
const ready = ref(linearEngineReady());
let loading: Promise<void> | undefined;

export const patternEngineReady: Readonly<Ref<boolean>> = readonly(ready);

/** Loads the engine once (every caller shares the one load). */
export function ensurePatternEngine(): Promise<void> {
  loading ??= loadLinearEngine().then(() => {
    ready.value = true;
  });
  return loading;
}
