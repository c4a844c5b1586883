import { existsSync } from 'node:fs';
import { defineConfig } from 'vitest/config';

const optional = ['packages/ui/vitest.config.ts', 'e2e/vitest.config.ts', 'e2e/ui2/vitest.config.ts'].filter((f) => existsSync(f));

// One test command for the whole repository. Node-side tests run in the `node` project;
// the UI package adds its own project (happy-dom) in packages/ui/vitest.config.ts.
export default defineConfig({
  test: {
    // Two files at a time, across projects (the browser projects keep their own files one at a
    // time): most test time is spent waiting on child processes, sockets and the browser, not on
    // the CPU. Vitest's default on a 2-core machine is one.
    maxWorkers: 2,
    projects: [
      {
        test: {
          name: 'node',
          environment: 'node',
          include: [
            'packages/protocol/src/**/*.test.ts',
            'packages/host/src/**/*.test.ts',
            'packages/host/test/**/*.test.ts',
            'packages/plugin-sdk/src/**/*.test.ts',
            'packages/plugin-sdk/test/**/*.test.ts',
            'packages/plugins/*/test/**/*.test.ts',
            'packages/plugins/*/src/**/*.test.ts',
            'crash/**/*.test.ts',
          ],
          testTimeout: 60_000,
          hookTimeout: 60_000,
          pool: 'forks',
        },
      },
      ...optional,
    ],
  },
});
