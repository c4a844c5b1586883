import { Writable } from 'node:stream';
import Fastify from 'fastify';
import pino from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { requestLoggerFactory } from '../../src/http/request-logger';
import { startTestHost, type TestHost } from '../support/host';

/**
 * Request logs: a request's logger is made only when the request logs at a level the host writes,
 * and whatever it writes is what a child bound to the request id would write — the request id on
 * every line (Fastify's own request lines at `info`, a failed request's error line at the default
 * `warn`), the host token never.
 */

function sink(): { stream: Writable; lines: () => Array<Record<string, any>> } {
  const chunks: string[] = [];
  const stream = new Writable({
    write(chunk, _enc, cb) {
      chunks.push(String(chunk));
      cb();
    },
  });
  return {
    stream,
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l)),
  };
}

let hosts: TestHost[] = [];
afterEach(async () => {
  for (const h of hosts) await h.close();
  hosts = [];
});

describe('the lazy request logger', () => {
  it('below the level: writes nothing and makes no child; at the level: writes through a child bound to the request id', () => {
    const out = sink();
    const parent = pino({ level: 'warn' }, out.stream);
    const child = vi.spyOn(parent, 'child');
    const log = requestLoggerFactory(parent, { reqId: 'req-1' }, {});
    log.info({ a: 1 }, 'quiet');
    log.debug('quiet');
    expect(child).not.toHaveBeenCalled();
    expect(out.lines()).toEqual([]);
    expect(log.level).toBe('warn');
    log.error({ err: new Error('boom') }, 'request failed');
    log.warn('second');
    expect(child).toHaveBeenCalledTimes(1);
    const lines = out.lines();
    expect(lines.map((l) => [l.msg, l.reqId])).toEqual([
      ['request failed', 'req-1'],
      ['second', 'req-1'],
    ]);
    expect(lines[0]?.err?.message).toBe('boom');
  });

  it('at info every line carries the request id; a derived logger keeps it; a route level makes the child at once', () => {
    const out = sink();
    const parent = pino({ level: 'info' }, out.stream);
    const log = requestLoggerFactory(parent, { reqId: 'req-2' }, {});
    log.info('hello');
    log.child({ part: 'x' }).warn('derived');
    expect(out.lines().map((l) => [l.msg, l.reqId, l.part])).toEqual([
      ['hello', 'req-2', undefined],
      ['derived', 'req-2', 'x'],
    ]);
    const child = vi.spyOn(parent, 'child');
    const debugRoute = requestLoggerFactory(parent, { reqId: 'req-3' }, { level: 'debug' });
    expect(child).toHaveBeenCalledTimes(1);
    debugRoute.debug('route level');
    expect(out.lines().at(-1)).toMatchObject({ msg: 'route level', reqId: 'req-3' });
  });

  it('in a Fastify app: a failing request logs its error with its request id', async () => {
    const out = sink();
    const app = Fastify({ loggerInstance: pino({ level: 'warn' }, out.stream), childLoggerFactory: requestLoggerFactory });
    app.get('/fail', async (req) => {
      req.log.error('handler failed');
      throw new Error('x');
    });
    app.get('/ok', async () => ({ ok: true }));
    expect((await app.inject({ method: 'GET', url: '/ok' })).statusCode).toBe(200);
    expect(out.lines()).toEqual([]);
    expect((await app.inject({ method: 'GET', url: '/fail' })).statusCode).toBe(500);
    const lines = out.lines();
    expect(lines.length).toBeGreaterThan(0);
    for (const l of lines) expect(l.reqId).toBe(lines[0]?.reqId);
    expect(lines.map((l) => l.msg)).toContain('handler failed');
    await app.close();
  });
});

describe('the host’s request logs', () => {
  it('at info: the incoming and completed lines of each request, with its request id and never the token', async () => {
    const out = sink();
    const t = await startTestHost({ logger: pino({ level: 'info', redact: ['req.headers["x-fengyu-token"]'] }, out.stream) });
    hosts.push(t);
    expect((await t.api('GET', '/api/health')).status).toBe(200);
    expect((await t.api('GET', '/api/settings', undefined, { 'x-fengyu-token': 'wrong-token-0123456789' })).status).toBe(401);
    const lines = out.lines().filter((l) => l.reqId !== undefined);
    const incoming = lines.filter((l) => l.msg === 'incoming request');
    const completed = lines.filter((l) => l.msg === 'request completed');
    expect(incoming.map((l) => l.req?.url)).toEqual(['/api/health', '/api/settings']);
    expect(completed.map((l) => l.res?.statusCode)).toEqual([200, 401]);
    expect(completed.map((l) => l.reqId)).toEqual(incoming.map((l) => l.reqId));
    expect(new Set(incoming.map((l) => l.reqId)).size).toBe(2);
    expect(JSON.stringify(out.lines())).not.toContain(t.host.token);
    expect(JSON.stringify(out.lines())).not.toContain('wrong-token-0123456789');
  });

  it('at the default level a request writes no line', async () => {
    const out = sink();
    const t = await startTestHost({ logger: pino({ level: 'warn' }, out.stream) });
    hosts.push(t);
    expect((await t.api('GET', '/api/health')).status).toBe(200);
    expect((await t.api('GET', '/api/settings', undefined, { 'x-fengyu-token': 'wrong-token-0123456789' })).status).toBe(401);
    expect(out.lines().filter((l) => l.reqId !== undefined)).toEqual([]);
  });
});
