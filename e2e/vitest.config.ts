import { defineProject } from 'vitest/config';

/**
 * Browser tests of the Flows library, builder and run panel: a real host (port 0, temp
 * FENGYU_HOME, the bundled Excel and e-mail plugins) serving packages/ui/dist (rebuilt first when
 * missing or stale), driven through playwright-core on Debian's chromium.
 * Run: `npx vitest run --project e2e` (or `npm run test:e2e`).
 */
export default defineProject({
  test: {
    name: 'e2e',
    root: `${import.meta.dirname}/..`,
    environment: 'node',
    include: ['e2e/flows/**/*.test.ts'],
    globalSetup: ['e2e/flows/global-setup.ts'],
    testTimeout: 180_000,
    hookTimeout: 240_000,
    fileParallelism: false,
    pool: 'forks',
  },
});
