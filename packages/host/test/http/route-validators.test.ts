import Fastify, { type FastifyRequest } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { routeValidatorCompiler } from '../../src/http/validation';
import { startTestHost, type TestHost } from '../support/host';

/**
 * Route validators are compiled when a route first validates a request (a start compiles none),
 * and validate exactly as strictly as when they were compiled up front.
 */

function appWith(routes: (app: ReturnType<typeof Fastify>) => void) {
  const validators = routeValidatorCompiler();
  const app = Fastify();
  app.setValidatorCompiler(validators);
  routes(app);
  return { app, validators };
}

describe('route validators compiled on first use', () => {
  it('compiles a route by its first request and refuses bad input from the first request on', async () => {
    let reached = 0;
    const { app, validators } = appWith((a) =>
      a.post('/items', { schema: { body: { type: 'object', required: ['n'], properties: { n: { type: 'integer' } }, additionalProperties: false } } }, async (req: FastifyRequest) => {
        reached++;
        return { got: req.body };
      }),
    );
    await app.ready();
    expect(validators.pending()).toBe(1);
    const bad = await app.inject({ method: 'POST', url: '/items', payload: { n: '5' } });
    expect(bad.statusCode).toBe(400);
    expect(bad.body).toContain('body/n');
    expect(validators.pending()).toBe(0);
    expect((await app.inject({ method: 'POST', url: '/items', payload: { n: 5, extra: 1 } })).statusCode).toBe(400);
    expect(reached).toBe(0);
    const ok = await app.inject({ method: 'POST', url: '/items', payload: { n: 5 } });
    expect(ok.statusCode).toBe(200);
    expect(ok.json()).toEqual({ got: { n: 5 } });
    await app.close();
  });

  it('still parses numbers from the query string and applies defaults to it', async () => {
    const { app } = appWith((a) =>
      a.get('/list', { schema: { querystring: { type: 'object', properties: { limit: { type: 'integer', default: 20 }, all: { type: 'boolean' } } } } }, async (req: FastifyRequest) => ({ q: req.query })),
    );
    expect((await app.inject({ url: '/list?limit=2&all=true' })).json()).toEqual({ q: { limit: 2, all: true } });
    expect((await app.inject({ url: '/list' })).json()).toEqual({ q: { limit: 20 } });
    expect((await app.inject({ url: '/list?limit=two' })).statusCode).toBe(400);
    await app.close();
  });

  it('fails the requests of a route whose schema does not compile (never lets them through) and names it in compileAll', async () => {
    let reached = 0;
    const { app, validators } = appWith((a) =>
      a.post('/broken', { schema: { body: { type: 'object', properties: { n: { type: 'integr' } } } } }, async () => {
        reached++;
        return { ok: true };
      }),
    );
    await app.ready();
    const res = await app.inject({ method: 'POST', url: '/broken', payload: { n: 1 } });
    expect(res.statusCode).toBe(500);
    expect(reached).toBe(0);
    expect(() => validators.compileAll()).toThrow(/POST \/broken \(body\)/);
    await app.close();
  });
});

describe('the host', () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await startTestHost();
  });
  afterAll(async () => t.close());

  it('starts with its route validators not compiled yet, and every one of them compiles', async () => {
    expect(t.host.validators.pending()).toBeGreaterThan(20);
    t.host.validators.compileAll();
    expect(t.host.validators.pending()).toBe(0);
    // a compiled route still refuses a wrong type, naming the field
    const res = await t.api('POST', '/api/agent/run', { goal: 5, workflow: { steps: [{ id: 'a', tool: 'noop' }] } });
    expect(res.status).toBe(400);
    expect(JSON.stringify(res.body.error.details)).toContain('body.goal');
  });
});
