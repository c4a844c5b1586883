import { RE2JS } from 're2js';

/**
 * RE2, the pattern engine safe-regexp.ts starts with. The web UI's build resolves this module to
 * one exporting `undefined` (packages/ui/src/app/no-re2-engine.ts) and loads RE2 on first need.
 */
export const bundledEngine: Pick<typeof RE2JS, 'compile'> | undefined = RE2JS;
