import { FengYuError } from '@fengyu/protocol';
import Fastify, { type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sendError } from '../../src/http/errors';
import { frontDoorRewriteUrl, installFrontDoor, JSON_MAX_DEPTH } from '../../src/http/front-door';
import { startTestHost, type TestHost } from '../support/host';
import { rawRequest } from './raw-http';

/**
 * The front door against a real host over raw TCP: every spelling of a path reaches the same
 * route with the same token check, and foreign Hosts and Origins are refused on every route.
 */

let t: TestHost;
let port: number;
let token: string;
const auth = () => ({ 'x-fengyu-token': token });

beforeAll(async () => {
  t = await startTestHost();
  port = t.host.port;
  token = t.host.token;
});
afterAll(async () => t.close());

const SAME_AS_SETTINGS = ['/api/settings', '/%61pi/settings', '/api/%73ettings', '//api/settings', '/api//settings', '/x/../api/settings', '/./api/settings', '/api/./settings', '/../api/settings', '/%2e%2e/api/settings', '/x/%2E%2E/api/settings', '/api/settings/', '///api///settings//'];

describe('one path for the router and the token check', () => {
  for (const target of SAME_AS_SETTINGS) {
    it(`${target} without a token is 401 and leaks nothing`, async () => {
      const res = await rawRequest(port, { target });
      expect(res.status).toBe(401);
      expect(res.json.error.code).toBe('unauthorized');
      expect(res.text).not.toContain('permissions');
    });
    it(`${target} with the token is exactly GET /api/settings`, async () => {
      const res = await rawRequest(port, { target, headers: auth() });
      expect(res.status).toBe(200);
      expect(res.json).toHaveProperty('permissions');
    });
  }

  for (const target of ['/API/settings', '/Api/settings', '/%41PI/settings', '/API', '/METRICS', '/Metrics']) {
    it(`${target} (another letter case) is refused with or without the token`, async () => {
      const anon = await rawRequest(port, { target });
      expect(anon.status).toBe(401);
      const withToken = await rawRequest(port, { target, headers: auth() });
      expect(withToken.status).toBe(404);
      expect(withToken.text).not.toContain('permissions');
    });
  }

  for (const target of ['/api%2fsettings', '/api%2Fsettings', '/api/settings%2f', '/%2fapi/settings', '/api%5csettings', '/api/settings%00', '/api/%00/../settings', '/api/sett%zzings', '/api/settings%', '/api/%E0%A4%A', '/api/settings%0a']) {
    it(`${target} is a 400 (encoded slash, backslash, NUL/control or bad escape)`, async () => {
      const anon = await rawRequest(port, { target });
      expect(anon.status).toBe(400);
      expect(anon.json.error.code).toBe('invalid_path');
      const withToken = await rawRequest(port, { target, headers: auth() });
      expect(withToken.status).toBe(400);
    });
  }

  it('a raw backslash or # in the path is a 400', async () => {
    for (const target of ['/api\\settings', '/x#/../api/settings']) {
      const res = await rawRequest(port, { target, headers: auth() });
      expect(res.status, target).toBe(400);
    }
  });

  it('PATCH through an encoded path still needs the token (no unauthenticated writes)', async () => {
    const res = await rawRequest(port, { method: 'PATCH', target: '/%61pi/settings', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ permissions: { allow: ['Command(*)'] } }) });
    expect(res.status).toBe(401);
    const after = await t.api('GET', '/api/settings');
    expect(after.body.permissions.allow).toEqual([]);
  });

  it('/api/workflow-hooks/* has no token bypass (a route must declare its own exemption)', async () => {
    for (const target of ['/api/workflow-hooks/x', '/api/workflow-hooks/../settings', '/api/workflow-hooks/%2e%2e/settings']) {
      const res = await rawRequest(port, { method: 'GET', target });
      expect(res.status, target).toBe(401);
    }
  });

  it('/metrics needs the token even before a metrics route exists', async () => {
    expect((await rawRequest(port, { target: '/metrics' })).status).toBe(401);
    expect((await rawRequest(port, { target: '//metrics' })).status).toBe(401);
    expect((await rawRequest(port, { target: '/%6detrics' })).status).toBe(401);
    expect((await rawRequest(port, { target: '/METRICS' })).status).toBe(401);
    expect((await rawRequest(port, { target: '/metrics', headers: { authorization: 'Bearer wrong-token' } })).status).toBe(401);
    expect((await rawRequest(port, { target: `/metrics?token=${token}` })).status).toBe(401);
  });

  it('the UI outside /api needs no token', async () => {
    const res = await rawRequest(port, { target: '/' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('text/html');
  });
});

describe('?token= only on GET of the named stream routes', () => {
  it('the agent stream accepts ?token= on GET (any spelling of its path)', async () => {
    for (const target of [`/api/agent/stream?runId=nope&token=${token}`, `/%61pi/agent//stream?runId=nope&token=${token}`]) {
      const res = await rawRequest(port, { target });
      expect(res.status, target).toBe(404);
      expect(res.json.error.code).toBe('run_not_found');
    }
  });

  it('?token= is ignored on every other route and on other methods', async () => {
    const cases: Array<[string, string]> = [
      ['GET', `/api/settings?token=${token}`],
      ['GET', `/api/agent/runs?token=${token}`],
      ['GET', `/api/foo/stream?token=${token}`],
      ['GET', `/api/chat/stream?token=${token}`],
      ['POST', `/api/agent/stream?runId=nope&token=${token}`],
      ['POST', `/api/agent/run?token=${token}`],
      ['PATCH', `/api/settings?token=${token}`],
    ];
    for (const [method, target] of cases) {
      const res = await rawRequest(port, { method, target, headers: { 'content-type': 'application/json' }, body: '{}' });
      expect(res.status, `${method} ${target}`).toBe(401);
    }
  });
});

describe('query and body limits are 400s, never 500s', () => {
  it('a duplicated query parameter is a 400 naming it', async () => {
    for (const target of ['/api/agent/runs?limit=1&limit=2', '/api/agent/stream?runId=a&runId=b', `/api/agent/stream?runId=a&token=${token}&token=x`, '/api/agent/runs?q=a&%71=b']) {
      const res = await rawRequest(port, { target, headers: auth() });
      expect(res.status, target).toBe(400);
      expect(res.json.error.code).toBe('duplicate_query_parameter');
    }
    const ok = await rawRequest(port, { target: '/api/agent/runs?limit=1&q=x', headers: auth() });
    expect(ok.status).toBe(200);
  });

  it('a 100,000-deep JSON body is a 400', async () => {
    const deepArray = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    const deepObject = `${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`;
    for (const [target, method] of [
      ['/api/agent/run', 'POST'],
      ['/api/settings', 'PATCH'],
      ['/api/agent/nope/approve', 'POST'],
    ] as const) {
      for (const body of [deepArray, deepObject]) {
        const res = await rawRequest(port, { method, target, headers: { ...auth(), 'content-type': 'application/json' }, body });
        expect(res.status, `${method} ${target}`).toBe(400);
        expect(res.json.error.code).toBe('json_too_deep');
      }
    }
  });

  it('nesting up to the limit is accepted by the parser', async () => {
    const body = JSON.stringify({ goal: 'x', inputs: { deep: JSON.parse(`${'['.repeat(JSON_MAX_DEPTH - 2)}${']'.repeat(JSON_MAX_DEPTH - 2)}`) } });
    const res = await rawRequest(port, { method: 'POST', target: '/api/agent/run', headers: { ...auth(), 'content-type': 'application/json' }, body });
    expect(res.json?.error?.code).not.toBe('json_too_deep');
    expect(res.status).toBeLessThan(500);
  });

  it('a __proto__ key anywhere in a JSON body is a 400', async () => {
    for (const body of ['{"__proto__":{"x":1}}', '{"a":[{"\\u005f_proto__":{}}]}']) {
      const res = await rawRequest(port, { method: 'PATCH', target: '/api/settings', headers: { ...auth(), 'content-type': 'application/json' }, body });
      expect(res.status, body).toBe(400);
      expect(res.json.error.code).toBe('forbidden_key');
    }
  });

  it('a __proto__ key is a 400 on a route with no key check of its own, and nothing is created', async () => {
    const runs = async () => {
      const res = await rawRequest(port, { method: 'GET', target: '/api/agent/runs', headers: auth() });
      expect(res.status).toBe(200);
      return res.json;
    };
    const before = await runs();
    for (const body of ['{"__proto__":{"x":1},"workflow":{"steps":[{"id":"a","tool":"echo"}]}}', '{"workflow":{"steps":[{"id":"a","tool":"echo","arguments":{"\\u005f_proto__":{}}}]}}']) {
      const res = await rawRequest(port, { method: 'POST', target: '/api/agent/run', headers: { ...auth(), 'content-type': 'application/json' }, body });
      expect(res.status, body).toBe(400);
      expect(res.json.error.code).toBe('forbidden_key');
    }
    expect(await runs()).toEqual(before);
  });

  it('malformed JSON is a 400 in Chinese too', async () => {
    const res = await rawRequest(port, { method: 'PATCH', target: '/api/settings', headers: { ...auth(), 'content-type': 'application/json', 'accept-language': 'zh-CN' }, body: '{"a":' });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe('invalid_json');
  });
});

describe('Origin: only this host itself', () => {
  const refused = () => [`http://evil.example`, 'null', `http://127.0.0.1:${port + 1}`, `http://localhost:${port + 1}`, `https://127.0.0.1:${port}`, `http://127.0.0.1.evil.example:${port}`, `http://127.0.0.1`, `http://localhost`, `http://evil.example:${port}`, `http://127.0.0.1:${port}/`, `http://user@127.0.0.1:${port}`];
  const accepted = () => [`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://LOCALHOST:${port}`, `http://[::1]:${port}`];

  it('a foreign Origin is 403 on API routes even with the token', async () => {
    for (const origin of refused()) {
      const res = await rawRequest(port, { target: '/api/settings', headers: { ...auth(), origin } });
      expect(res.status, origin).toBe(403);
      expect(res.json.error.code).toBe('forbidden_origin');
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    }
  });

  it('a foreign Origin is 403 on the UI static routes and on writes', async () => {
    for (const origin of refused()) {
      expect((await rawRequest(port, { target: '/', headers: { origin } })).status, origin).toBe(403);
      expect((await rawRequest(port, { target: '/index.html', headers: { origin } })).status, origin).toBe(403);
      const write = await rawRequest(port, { method: 'PATCH', target: '/api/settings', headers: { ...auth(), origin, 'content-type': 'application/json' }, body: '{"permissions":{"allow":["Command(*)"]}}' });
      expect(write.status, origin).toBe(403);
    }
    expect((await t.api('GET', '/api/settings')).body.permissions.allow).toEqual([]);
  });

  it('our own loopback origin on our port is accepted', async () => {
    for (const origin of accepted()) {
      const res = await rawRequest(port, { target: '/api/settings', headers: { ...auth(), origin } });
      expect(res.status, origin).toBe(200);
      expect((await rawRequest(port, { target: '/', headers: { origin } })).status, origin).toBe(200);
    }
  });
});

describe('Host: only loopback names', () => {
  it('a foreign or missing Host is 403 on every route', async () => {
    for (const host of ['evil.example', `evil.example:${port}`, `127.0.0.1.evil.example:${port}`, `localhost.evil.example:${port}`, '10.0.0.1', `0.0.0.0:${port}`]) {
      for (const target of ['/api/settings', '/']) {
        const res = await rawRequest(port, { target, headers: { ...auth(), host } });
        expect(res.status, `${host} ${target}`).toBe(403);
      }
    }
    const none = await rawRequest(port, { target: '/api/settings', headers: { ...auth(), host: null }, http10: true });
    expect(none.status).toBe(403);
  });

  it('loopback Hosts are accepted', async () => {
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`, 'localhost']) {
      const res = await rawRequest(port, { target: '/api/settings', headers: { ...auth(), host } });
      expect(res.status, host).toBe(200);
    }
  });
});

describe('per-route options: tokenExempt, bearerAuth, queryToken', () => {
  let app: FastifyInstance;
  let p: number;
  const TOKEN = 'front-door-test-token-123456';
  const BOB = 'bobs-token-looked-up-123456';
  const BROKEN = 'token-whose-lookup-fails-1234';
  const NOBODY = 'token-looked-up-no-owner-1234';
  beforeAll(async () => {
    app = Fastify({ rewriteUrl: frontDoorRewriteUrl }) as unknown as FastifyInstance;
    app.decorateRequest('owner', '');
    app.setErrorHandler((err, req, reply) => sendError(err, req, reply));
    app.setNotFoundHandler((req, reply) => sendError(new FengYuError('route_not_found', { method: req.method, url: req.url }), req, reply));
    // the primary token is known at once; another owner's token is looked up (a promise), which may fail
    const ownerOf = (tk: string | undefined) => (tk === TOKEN ? 'default' : tk === BOB ? Promise.resolve('bob') : tk === BROKEN ? Promise.reject(new Error('owners table unreadable')) : tk === NOBODY ? Promise.resolve(undefined) : undefined);
    installFrontDoor(app, { ownerOf }, 1024 * 1024);
    app.post('/api/workflow-hooks/:id', { config: { tokenExempt: 'webhook-secret' } }, async (req) => ({ hook: (req.params as { id: string }).id, owner: req.owner }));
    app.get('/metrics', { config: { bearerAuth: true } }, async (req) => ({ metrics: true, owner: req.owner }));
    app.get('/api/tasks/stream', { config: { queryToken: true } }, async (req) => ({ stream: true, owner: req.owner }));
    app.post('/api/tasks/stream', { config: { queryToken: true } }, async (req) => ({ stream: true, owner: req.owner }));
    app.get('/api/other', async (req) => ({ owner: req.owner }));
    await app.listen({ host: '127.0.0.1', port: 0 });
    p = (app.server.address() as { port: number }).port;
  });
  afterAll(async () => app.close());

  it('a tokenExempt route skips the host token but keeps the Host and Origin checks', async () => {
    const ok = await rawRequest(p, { method: 'POST', target: '/api/workflow-hooks/abc' });
    expect(ok.status).toBe(200);
    expect(ok.json.hook).toBe('abc');
    expect((await rawRequest(p, { method: 'POST', target: '/%61pi/workflow-hooks/abc' })).status).toBe(200);
    expect((await rawRequest(p, { method: 'POST', target: '/api/workflow-hooks/abc', headers: { origin: 'http://evil.example' } })).status).toBe(403);
    expect((await rawRequest(p, { method: 'POST', target: '/api/workflow-hooks/abc', headers: { host: 'evil.example' } })).status).toBe(403);
    // The exemption covers only that route: a neighbour path still needs the token.
    expect((await rawRequest(p, { method: 'POST', target: '/api/workflow-hooks/abc/../../other' })).status).toBe(401);
    expect((await rawRequest(p, { method: 'GET', target: '/api/workflow-hooks/abc' })).status).toBe(401);
  });

  it('a bearerAuth route accepts Authorization: Bearer, and still refuses without a token', async () => {
    expect((await rawRequest(p, { target: '/metrics' })).status).toBe(401);
    expect((await rawRequest(p, { target: '/metrics', headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await rawRequest(p, { target: '/metrics', headers: { authorization: `Basic ${TOKEN}` } })).status).toBe(401);
    expect((await rawRequest(p, { target: '/metrics', headers: { authorization: `Bearer ${TOKEN}` } })).json).toEqual({ metrics: true, owner: 'default' });
    expect((await rawRequest(p, { target: '/metrics', headers: { 'x-fengyu-token': TOKEN } })).status).toBe(200);
    expect((await rawRequest(p, { target: '/api/other', headers: { authorization: `Bearer ${TOKEN}` } })).status).toBe(401);
  });

  it('a token answered at once and one looked up both admit their owner; a failed or empty lookup admits nobody', async () => {
    expect((await rawRequest(p, { target: '/api/other', headers: { 'x-fengyu-token': TOKEN } })).json).toEqual({ owner: 'default' });
    expect((await rawRequest(p, { target: '/api/other', headers: { 'x-fengyu-token': BOB } })).json).toEqual({ owner: 'bob' });
    const broken = await rawRequest(p, { target: '/api/other', headers: { 'x-fengyu-token': BROKEN } });
    expect(broken.status).toBe(500);
    expect(broken.json.owner).toBeUndefined();
    expect((await rawRequest(p, { target: '/api/other', headers: { 'x-fengyu-token': NOBODY } })).status).toBe(401);
    expect((await rawRequest(p, { target: '/api/other', headers: { 'x-fengyu-token': 'wrong' } })).status).toBe(401);
    // the checks before the token still come first, whichever way the token is answered
    expect((await rawRequest(p, { target: '/api/other', headers: { 'x-fengyu-token': BOB, host: 'evil.example' } })).status).toBe(403);
    expect((await rawRequest(p, { target: '/api/other?a=1&a=2', headers: { 'x-fengyu-token': TOKEN } })).status).toBe(400);
    // a miscased protected path is refused after the token, for both kinds
    expect((await rawRequest(p, { target: '/API/other', headers: { 'x-fengyu-token': TOKEN } })).status).toBe(404);
    expect((await rawRequest(p, { target: '/API/other', headers: { 'x-fengyu-token': BOB } })).status).toBe(404);
  });

  it('a queryToken route accepts ?token= on GET only', async () => {
    expect((await rawRequest(p, { target: `/api/tasks/stream?token=${TOKEN}` })).status).toBe(200);
    expect((await rawRequest(p, { method: 'POST', target: `/api/tasks/stream?token=${TOKEN}` })).status).toBe(401);
    expect((await rawRequest(p, { target: `/api/other?token=${TOKEN}` })).status).toBe(401);
  });
});

describe('headers that must come once, and framing', () => {
  it('refuses a request with two Host headers, whichever comes first', async () => {
    for (const [first, second] of [
      [`127.0.0.1:${port}`, 'evil.example'],
      ['evil.example', `127.0.0.1:${port}`],
      [`127.0.0.1:${port}`, `localhost:${port}`],
    ]) {
      const res = await rawRequest(port, { target: '/api/settings', headers: { host: first as string, ...auth() }, extraLines: [`Host: ${second}`] });
      expect(res.status).toBe(400);
      expect(res.json.error.code).toBe('duplicate_header');
      expect(res.json.error.message).toContain('host');
      expect(res.json.settings).toBeUndefined();
    }
  });

  it('refuses two tokens or two Origins (no first-wins reading)', async () => {
    const tokens = await rawRequest(port, { target: '/api/settings', headers: auth(), extraLines: ['X-FengYu-Token: wrong'] });
    expect(tokens.status).toBe(400);
    expect(tokens.json.error.code).toBe('duplicate_header');
    const origins = await rawRequest(port, { method: 'POST', target: '/api/owners', headers: { ...auth(), origin: `http://127.0.0.1:${port}`, 'content-type': 'application/json' }, extraLines: [`Origin: http://127.0.0.1:${port}`], body: '{"name":"x"}' });
    expect(origins.status).toBe(400);
    expect(origins.json.error.code).toBe('duplicate_header');
  });

  it('forbids framing of the UI, API answers and errors', async () => {
    for (const res of [await rawRequest(port, { target: '/' }), await rawRequest(port, { target: '/api/health' }), await rawRequest(port, { target: '/api/settings' }), await rawRequest(port, { target: '/api/settings', headers: auth() })]) {
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    }
  });
});
