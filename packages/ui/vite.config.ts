import { fileURLToPath } from 'node:url';
import vue from '@vitejs/plugin-vue';
import { defineConfig } from 'vite';

const here = (p: string) => fileURLToPath(new URL(p, import.meta.url));

/** Builds the web UI into packages/ui/dist; the host serves it at `/` with an SPA fallback. */
export default defineConfig({
  root: here('.'),
  base: '/',
  plugins: [vue()],
  resolve: {
    alias: [
      { find: '@fengyu/protocol', replacement: here('../protocol/src/index.ts') },
      // protocol's RE2 engine is loaded on first need, not with the first screen (app/pattern-engine.ts)
      { find: /^\.\/re2-engine$/, replacement: here('src/app/no-re2-engine.ts') },
    ],
  },
  define: {
    __VUE_OPTIONS_API__: 'false',
    __VUE_PROD_DEVTOOLS__: 'false',
    __VUE_PROD_HYDRATION_MISMATCH_DETAILS__: 'false',
    __VUE_I18N_FULL_INSTALL__: 'false',
    __VUE_I18N_LEGACY_API__: 'false',
    __INTLIFY_PROD_DEVTOOLS__: 'false',
  },
  build: {
    outDir: here('dist'),
    emptyOutDir: true,
    chunkSizeWarningLimit: 2000,
    // Rolldown's "[PLUGIN_TIMINGS]" advice (the Vue plugin is slow on a busy machine) is for the
    // bundler's authors, not for a person running `npm start`: the check is off.
    rolldownOptions: { checks: { bundlerTimings: false } },
  },
  server: {
    // The host refuses any Origin but its own: the dev server's own pages are re-labelled as the
    // host's origin; any other page's Origin passes through and is refused.
    proxy: {
      '/api': {
        target: 'http://127.0.0.1:7878',
        configure: (proxy) =>
          proxy.on('proxyReq', (proxyReq, req) => {
            const origin = req.headers.origin;
            if (origin && origin === `http://${req.headers.host}`) proxyReq.setHeader('origin', 'http://127.0.0.1:7878');
          }),
      },
    },
  },
});
