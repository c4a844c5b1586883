import type { FastifyInstance, RouteOptions } from 'fastify';

/**
 * The OpenAPI 3.1 document, generated from the routes' own schemas as they are registered
 * (so it can never drift from what the server validates).
 */

interface Collected {
  method: string;
  url: string;
  schema: Record<string, unknown>;
  /** The route authenticates callers itself (no host token). */
  tokenExempt: boolean;
}

export function collectRoutes(app: FastifyInstance): Collected[] {
  const routes: Collected[] = [];
  app.addHook('onRoute', (r: RouteOptions) => {
    if (!r.url.startsWith('/api') && r.url !== '/metrics') return;
    const methods = Array.isArray(r.method) ? r.method : [r.method];
    for (const m of methods) {
      if (m === 'HEAD' || m === 'OPTIONS') continue;
      routes.push({ method: m.toLowerCase(), url: r.url, schema: (r.schema ?? {}) as Record<string, unknown>, tokenExempt: (r.config as { tokenExempt?: string } | undefined)?.tokenExempt !== undefined });
    }
  });
  return routes;
}

function toParameters(schema: Record<string, unknown>, where: 'path' | 'query') {
  const s = schema as { properties?: Record<string, unknown>; required?: string[] } | undefined;
  if (!s?.properties) return [];
  return Object.entries(s.properties).map(([name, sch]) => ({ name, in: where, required: where === 'path' || (s.required ?? []).includes(name), schema: sch }));
}

export function openApiDocument(routes: Collected[], version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const s = r.schema;
    const op: Record<string, unknown> = {
      summary: s.summary ?? `${r.method.toUpperCase()} ${path}`,
      tags: s.tags ?? [],
      parameters: [...toParameters(s.params as Record<string, unknown>, 'path'), ...toParameters(s.querystring as Record<string, unknown>, 'query')],
      responses: {
        ...Object.fromEntries(Object.entries((s.response as Record<string, unknown>) ?? {}).map(([code, sch]) => [code, { description: String(code), content: { 'application/json': { schema: sch } } }])),
        default: { description: 'Error envelope', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
      security: r.tokenExempt ? [] : [{ token: [] }],
    };
    if (s.body) op.requestBody = { content: { 'application/json': { schema: s.body } } };
    if (s.consumes) op.requestBody = { content: Object.fromEntries((s.consumes as string[]).map((c) => [c, { schema: { type: 'object' } }])) };
    paths[path] = { ...(paths[path] ?? {}), [r.method]: op };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'FengYu host API', version },
    servers: [{ url: '/' }],
    components: {
      securitySchemes: { token: { type: 'apiKey', in: 'header', name: 'X-FengYu-Token' } },
      schemas: {
        Error: {
          type: 'object',
          properties: { error: { type: 'object', properties: { code: { type: 'string' }, message: { type: 'string' }, details: {} }, required: ['code', 'message'] } },
        },
      },
    },
    paths,
  };
}
