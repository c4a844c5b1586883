import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serveUi } from '../../src/http/static';

/** The web UI folder is served, and nothing outside it: not through `..`, not through a symlink. */

let base: string;
let app: FastifyInstance;
let port: number;

beforeAll(async () => {
  base = mkdtempSync(join(tmpdir(), 'fengyu-static-'));
  const ui = join(base, 'ui');
  mkdirSync(join(ui, 'assets'), { recursive: true });
  writeFileSync(join(ui, 'index.html'), '<!doctype html><title>ui</title>');
  writeFileSync(join(ui, 'assets', 'app.js'), 'console.log("app")');
  writeFileSync(join(base, 'secret.txt'), 'TOP-SECRET');
  mkdirSync(join(base, 'outside'));
  writeFileSync(join(base, 'outside', 'x.js'), 'OUTSIDE-FILE');
  symlinkSync(join(base, 'secret.txt'), join(ui, 'leak.txt'));
  symlinkSync(join(base, 'outside'), join(ui, 'assets', 'linked'));
  app = Fastify();
  serveUi(app, ui);
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as AddressInfo).port;
});
afterAll(async () => {
  await app?.close();
  rmSync(base, { recursive: true, force: true });
});

/** A raw GET: the path goes on the wire exactly as written (no client-side `..` folding). */
function get(path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, method: 'GET' }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('static UI', () => {
  it('serves files of the UI folder and falls back to index.html', async () => {
    expect(await get('/assets/app.js')).toMatchObject({ status: 200, body: 'console.log("app")' });
    expect((await get('/some/route')).body).toContain('<title>ui</title>');
  });

  it('never serves a file outside the folder, whatever the path form', async () => {
    for (const path of ['/../secret.txt', '/assets/../../secret.txt', '/%2e%2e/secret.txt', '/..%2fsecret.txt', '/assets/%2e%2e%2f%2e%2e%2fsecret.txt', '/leak.txt', '/assets/linked/x.js', '/assets/linked/../../secret.txt', '/%00', '/%E0%A4%A']) {
      const r = await get(path);
      expect(r.body, path).not.toContain('TOP-SECRET');
      expect(r.body, path).not.toContain('OUTSIDE-FILE');
    }
    expect((await get('/leak.txt')).status).toBe(404);
    expect((await get('/assets/linked/x.js')).status).toBe(404);
  });
});
