import { createReadStream, existsSync, statSync } from 'node:fs';
import { extname, join, normalize, resolve, sep } from 'node:path';
import type { FastifyInstance } from 'fastify';

/** Serves the built web UI at `/` with an SPA fallback; never a path outside its folder. */

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.webmanifest': 'application/manifest+json',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.map': 'application/json',
};

export function serveUi(app: FastifyInstance, dir: string): void {
  const root = resolve(dir);
  app.get('/*', { schema: { hide: true } }, async (req, reply) => {
    const url = decodeURIComponent((req.url.split('?')[0] ?? '/').replace(/^\/+/, ''));
    if (url.startsWith('api/')) return reply.callNotFound();
    let file = normalize(join(root, url));
    if (!file.startsWith(root + sep) && file !== root) return reply.callNotFound();
    if (!existsSync(file) || statSync(file).isDirectory()) file = join(root, 'index.html');
    if (!existsSync(file)) {
      return reply.type('text/html; charset=utf-8').send('<!doctype html><title>FengYu</title><p>The web UI is not built yet: run <code>npm run build</code>, then reload.</p>');
    }
    const type = TYPES[extname(file)] ?? 'application/octet-stream';
    const fresh = file.endsWith('index.html') || file.endsWith('sw.js') || file.endsWith('.webmanifest');
    reply.header('cache-control', fresh ? 'no-cache' : 'public, max-age=3600');
    reply.header('x-content-type-options', 'nosniff');
    return reply.type(type).send(createReadStream(file));
  });
}
