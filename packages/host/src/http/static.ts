import { createReadStream, existsSync, statSync } from 'node:fs';
import { extname, resolve } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { resolveInside } from '../files/grant-paths';

/**
 * Serves the built web UI at `/` with an SPA fallback; never a path outside its folder: the
 * request path is resolved through `..` and symlinks and must stay inside the UI folder's real
 * path (a symlink in the folder that points elsewhere is not followed out).
 */

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
    let url: string;
    try {
      url = decodeURIComponent((req.url.split('?')[0] ?? '/').replace(/^\/+/, ''));
    } catch {
      return reply.callNotFound();
    }
    if (url.startsWith('api/')) return reply.callNotFound();
    let file = resolveInside(root, `./${url}`);
    if (file === undefined) return reply.callNotFound();
    if (!existsSync(file) || statSync(file).isDirectory()) file = resolveInside(root, 'index.html');
    if (file === undefined || !existsSync(file)) {
      return reply.type('text/html; charset=utf-8').send('<!doctype html><title>FengYu</title><p>The web UI is not built yet: run <code>npm run build</code>, then reload.</p>');
    }
    const type = TYPES[extname(file)] ?? 'application/octet-stream';
    const fresh = file.endsWith('index.html') || file.endsWith('sw.js') || file.endsWith('.webmanifest');
    reply.header('cache-control', fresh ? 'no-cache' : 'public, max-age=3600');
    reply.header('x-content-type-options', 'nosniff');
    return reply.type(type).send(createReadStream(file));
  });
}
