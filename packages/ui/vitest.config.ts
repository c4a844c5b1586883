import { fileURLToPath } from 'node:url';
import vue from '@vitejs/plugin-vue';
import { defineProject } from 'vitest/config';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

/** The `ui` test project: component and unit tests of the web UI, in happy-dom. */
export default defineProject({
  plugins: [vue()],
  resolve: {
    alias: [
      { find: '@fengyu/protocol', replacement: here('../protocol/src/index.ts') },
      // protocol's RE2 engine is loaded on first need, not with the first screen (app/pattern-engine.ts)
      { find: /^\.\/re2-engine$/, replacement: here('src/app/no-re2-engine.ts') },
    ],
  },
  test: {
    name: 'ui',
    root: here('../..'),
    environment: 'happy-dom',
    include: ['packages/ui/src/**/*.test.ts'],
  },
});
