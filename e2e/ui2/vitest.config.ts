import { defineProject } from 'vitest/config';

/**
 * Browser tests of the Agent, Runs, Plugins, Settings and Chat pages: a real host (port 0, temp
 * FENGYU_HOME) serving a fresh UI build, the scripted OpenAI-compatible server, Debian chromium
 * through playwright-core. Run: `npx vitest run --config e2e/ui2/vitest.config.ts`.
 */
export default defineProject({
  test: {
    name: 'e2e-ui2',
    root: import.meta.dirname + '/../..',
    environment: 'node',
    include: ['e2e/ui2/**/*.test.ts'],
    globalSetup: ['e2e/ui2/global-setup.ts'],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    fileParallelism: false,
    pool: 'forks',
  },
});
