import { fileURLToPath } from 'node:url';
import vue from '@vitejs/plugin-vue';
import { defineProject } from 'vitest/config';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

/** The `ui` test project: component and unit tests of the web UI, in happy-dom. */
export default defineProject({
  plugins: [vue()],
  resolve: {
    alias: { '@fengyu/protocol': here('../protocol/src/index.ts') },
  },
  test: {
    name: 'ui',
    root: here('../..'),
    environment: 'happy-dom',
    include: ['packages/ui/src/**/*.test.ts'],
  },
});
