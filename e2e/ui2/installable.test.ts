import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startUi2, type Ui2 } from './harness';

/** The UI as an installable web app: a manifest with icons, and a service worker that keeps the shell only. */

let u: Ui2;
beforeAll(async () => {
  u = await startUi2({ backend: false });
});
afterAll(async () => u.close());

describe('installable web app', () => {
  it('links a web manifest whose icons are served', async () => {
    await u.open('/');
    const href = await u.page.getAttribute('link[rel="manifest"]', 'href');
    expect(href).toBe('/manifest.webmanifest');
    const res = await fetch(`${u.t.host.url}${href}`);
    expect(res.headers.get('content-type')).toContain('application/manifest+json');
    const manifest = (await res.json()) as { display: string; start_url: string; icons: Array<{ src: string; sizes: string }> };
    expect(manifest.display).toBe('standalone');
    expect(manifest.icons.map((i) => i.sizes)).toEqual(expect.arrayContaining(['192x192', '512x512']));
    for (const icon of manifest.icons) {
      const png = await fetch(`${u.t.host.url}${icon.src}`);
      expect(png.status).toBe(200);
      expect(png.headers.get('content-type')).toBe('image/png');
    }
  });

  it('registers a service worker that caches the shell and never API data', async () => {
    await u.open('/');
    await u.page.waitForFunction(async () => (await navigator.serviceWorker.getRegistration())?.active?.state === 'activated');
    // Load the page again under the worker's control, make API calls through the app, then look at the cache.
    await u.open('/runs');
    await u.page.waitForFunction(() => navigator.serviceWorker.controller !== null);
    await u.page.evaluate(async (token) => {
      await fetch('/api/agent/runs', { headers: { 'x-fengyu-token': token } });
      await fetch('/api/settings', { headers: { 'x-fengyu-token': token } });
    }, u.t.host.token);
    const kept: string[] = await u.page.evaluate(async () => {
      const out: string[] = [];
      for (const name of await caches.keys()) for (const req of await (await caches.open(name)).keys()) out.push(new URL(req.url).pathname);
      return out;
    });
    expect(kept).toContain('/');
    expect(kept.some((p) => p.startsWith('/api') || p.startsWith('/metrics'))).toBe(false);
  });
});
