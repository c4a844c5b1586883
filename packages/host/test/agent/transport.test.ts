import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';

let t: TestHost;
beforeAll(async () => {
  t = await startTestHost();
});
afterAll(async () => t.close());

describe('auth and transport', () => {
  it('listens on loopback only', () => {
    const bound = t.host.app.server.address();
    expect(bound).toMatchObject({ address: '127.0.0.1', port: t.host.port });
    expect(new URL(t.host.url).hostname).toBe('127.0.0.1');
  });

  it('creates a 0600 token file and host.json', () => {
    const token = readFileSync(join(t.home, 'token'), 'utf8').trim();
    expect(token).toBe(t.host.token);
    expect(Buffer.from(token, 'base64url').length).toBeGreaterThanOrEqual(16);
    expect(statSync(join(t.home, 'token')).mode & 0o777).toBe(0o600);
    const info = JSON.parse(readFileSync(join(t.home, 'host.json'), 'utf8'));
    expect(info).toEqual({ url: t.host.url, port: t.host.port, pid: process.pid });
    expect(t.host.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('refuses API calls without or with a wrong token', async () => {
    for (const headers of [{}, { 'x-fengyu-token': 'wrong-token-wrong-token' }]) {
      const res = await fetch(`${t.host.url}/api/agent/runs`, { headers: headers as Record<string, string> });
      expect(res.status).toBe(401);
      expect((await res.json()).error.code).toBe('unauthorized');
    }
    const viaQuery = await fetch(`${t.host.url}/api/agent/runs?token=${t.host.token}`);
    expect(viaQuery.status).toBe(401);
  });

  it('refuses a non-loopback Host header (DNS rebinding)', async () => {
    const http = await import('node:http');
    const status = await new Promise<number>((resolve) => {
      const req = http.request({ host: '127.0.0.1', port: t.host.port, path: '/api/health', headers: { host: 'evil.example.com', 'x-fengyu-token': t.host.token } }, (res) => resolve(res.statusCode ?? 0));
      req.end();
    });
    expect(status).toBe(403);
  });

  it('sends no permissive CORS headers', async () => {
    const res = await fetch(`${t.host.url}/api/health`, { headers: { 'x-fengyu-token': t.host.token, origin: 'http://evil.example.com' } });
    expect(res.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('additional owners get their own token and see only their own runs', async () => {
    const made = await t.api('POST', '/api/owners', { name: 'alice' });
    expect(made.status).toBe(200);
    const aliceToken = made.body.token as string;
    const run = await t.api('POST', '/api/agent/run', { workflow: { steps: [{ id: 'a', tool: 'noop' }] }, config: { planApproval: false } });
    const asAlice = await fetch(`${t.host.url}/api/agent/runs/${run.body.runId}`, { headers: { 'x-fengyu-token': aliceToken } });
    expect(asAlice.status).toBe(404);
    const forbidden = await fetch(`${t.host.url}/api/owners`, { method: 'POST', headers: { 'x-fengyu-token': aliceToken, 'content-type': 'application/json' }, body: '{"name":"bob"}' });
    expect(forbidden.status).toBe(403);
  });

  it('answers unknown routes and runs with the localized envelope', async () => {
    const r = await t.api('GET', '/api/agent/runs/does-not-exist', undefined, { 'accept-language': 'zh-CN' });
    expect(r.status).toBe(404);
    expect(r.body.error).toMatchObject({ code: 'run_not_found' });
    expect(r.body.error.message).toMatch(/未找到运行/);
    const nf = await t.api('GET', '/api/nothing-here');
    expect(nf.status).toBe(404);
    expect(nf.body.error.code).toBe('route_not_found');
  });

  it('publishes an OpenAPI document covering every route', async () => {
    const doc = (await t.api('GET', '/api/openapi.json')).body;
    expect(doc.openapi).toBe('3.1.0');
    for (const p of ['/api/agent/run', '/api/agent/stream', '/api/agent/{runId}/approve', '/api/agent/{runId}/cancel', '/api/agent/runs', '/api/agent/runs/{runId}', '/api/agent/runs/{runId}/resume', '/api/agent/runs/{runId}/fork', '/api/agent/runs/{runId}/rewind', '/api/agent/batch', '/api/agent/tools', '/api/settings']) {
      expect(doc.paths[p], p).toBeDefined();
    }
    expect(doc.paths['/api/agent/run'].post.requestBody.content['application/json'].schema.properties.workflow).toBeDefined();
    expect(doc.paths['/api/agent/runs/{runId}'].get.parameters[0]).toMatchObject({ name: 'runId', in: 'path' });
    // the history's workflow filter: a query parameter with its id pattern, and the 400 it answers
    const runs = doc.paths['/api/agent/runs'].get;
    expect(runs.operationId).toBe('getAgentRuns');
    expect(runs.parameters).toContainEqual(expect.objectContaining({ name: 'workflowId', in: 'query', schema: expect.objectContaining({ pattern: '^[A-Za-z0-9][A-Za-z0-9_-]*$' }) }));
    expect(Object.keys(runs.responses)).toEqual(expect.arrayContaining(['400', '401']));
  });

  it('gives every operation a unique stable operationId and its 4xx answers in the error envelope', async () => {
    const doc = (await t.api('GET', '/api/openapi.json')).body;
    const ops = Object.entries(doc.paths as Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>).flatMap(([path, methods]) => Object.entries(methods).map(([method, op]) => ({ method, path, op })));
    const ids = ops.map((o) => o.op.operationId);
    expect(ids.every((id) => /^[a-z][A-Za-z0-9]+$/.test(id))).toBe(true);
    expect(new Set(ids).size).toBe(ids.length);
    // derived from the route, so generated clients keep their method names across releases
    expect(doc.paths['/api/agent/runs/{runId}/resume'].post.operationId).toBe('postAgentRunsByRunIdResume');
    expect(doc.paths['/api/workflows/{id}'].put.operationId).toBe('putWorkflowsById');
    expect(doc.paths['/metrics'].get.operationId).toBe('getMetrics');
    for (const { method, path, op } of ops) {
      const statuses = Object.keys(op.responses);
      expect(statuses, `${method} ${path}`).toContain('401');
      if (path.includes('{')) expect(statuses, `${method} ${path}`).toEqual(expect.arrayContaining(['400', '404']));
    }
    expect(Object.keys(doc.paths['/api/workflows/{id}'].put.responses)).toEqual(expect.arrayContaining(['400', '401', '404', '409', '413']));
    expect(doc.paths['/api/workflows/{id}'].put.responses['409'].description).toContain('workflow_revision_conflict');
    expect(doc.paths['/api/workflow-hooks/{triggerId}'].post.security).toEqual([{ webhookSecret: [] }]);
    // the documented envelope is the one a real 404 answers with
    const missing = await t.api('GET', '/api/agent/runs/no-such-run');
    expect(missing.status).toBe(404);
    const { Ajv } = await import('ajv');
    const envelope = new Ajv({ strict: false }).compile(doc.components.schemas.Error);
    expect(envelope(missing.body), JSON.stringify(envelope.errors)).toBe(true);
    expect(envelope({ error: { message: 'no code' } })).toBe(false);
  });

  it('passes a stock OpenAPI linter (Redocly, recommended rules)', async () => {
    const doc = (await t.api('GET', '/api/openapi.json')).body;
    const { createConfig, lintFromString } = await import('@redocly/openapi-core');
    const config = await createConfig({
      extends: ['recommended'],
      rules: {
        // the published routes: Fastify matches a static segment before a parameter (/api/agent/runs/x vs /api/agent/{runId}/approve)
        'no-ambiguous-paths': 'off',
        // the project publishes no licence field
        'info-license': 'off',
      },
    } as Parameters<typeof createConfig>[0]);
    const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: '/openapi.json', config });
    expect(problems.map((p) => `${p.ruleId}: ${p.message} at ${p.location[0]?.pointer}`)).toEqual([]);
    // the linter is live: an operation without an id or a 4xx answer is reported
    const broken = structuredClone(doc);
    delete broken.paths['/api/health'].get.operationId;
    broken.paths['/api/health'].get.responses = { '200': { description: 'ok' } };
    const found = await lintFromString({ source: JSON.stringify(broken), absoluteRef: '/openapi.json', config });
    expect(found.map((p) => p.ruleId).sort()).toEqual(['operation-4xx-response', 'operation-operationId']);
  });

  it('settings: GET returns sections, PATCH merges and validates whole', async () => {
    const before = (await t.api('GET', '/api/settings')).body;
    expect(before.locale).toBe('en');
    const bad = await t.api('PATCH', '/api/settings', { locale: 'fr', nonsense: 1 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_settings');
    expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['locale', 'nonsense']);
    expect((await t.api('GET', '/api/settings')).body.locale).toBe('en');
    const ok = await t.api('PATCH', '/api/settings', { locale: 'zh-CN' });
    expect(ok.status).toBe(200);
    expect(ok.body.locale).toBe('zh-CN');
  });

  it('lists the tool catalog with its contract fields', async () => {
    const tools = (await t.api('GET', '/api/agent/tools')).body as Array<Record<string, unknown>>;
    const echo = tools.find((x) => x.name === 'echo');
    expect(echo).toMatchObject({ name: 'echo', effect: 'read', source: 'builtin', id: 'builtin:echo', idempotent: false, available: true });
    expect(typeof echo?.schemaRevision).toBe('string');
    expect(echo?.inputSchema).toBeTypeOf('object');
  });
});
