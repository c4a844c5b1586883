import type { RE2JS } from 're2js';

/**
 * Stands in for protocol's `re2-engine.ts` in the web UI (vite.config.ts and vitest.config.ts
 * resolve it here): no engine at load, so RE2 (≈ 46 KB gzip) is not in the first screen's chunks.
 * `pattern-engine.ts` loads it where a schema is checked.
 */
export const bundledEngine: Pick<typeof RE2JS, 'compile'> | undefined = undefined;
