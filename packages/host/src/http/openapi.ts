import type { FastifyInstance, RouteOptions } from 'fastify';
import { ERROR_ENVELOPE, errorResponseComponents, errorResponses } from './openapi-errors';

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

const pascal = (s: string) =>
  s
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((w) => w[0]?.toUpperCase() + w.slice(1))
    .join('');

/**
 * The operation's stable id: a route's own `operationId` when its schema names one, otherwise the
 * method and the path's segments after `/api` (a parameter as `By<Name>`), e.g.
 * `POST /api/agent/runs/{runId}/resume` → `postAgentRunsByRunIdResume`. It changes only when the
 * route itself does.
 */
export function operationIdOf(method: string, path: string, own?: unknown): string {
  if (typeof own === 'string' && own) return own;
  const segments = path.split('/').filter(Boolean);
  const rest = segments[0] === 'api' ? segments.slice(1) : segments;
  return method.toLowerCase() + rest.map((seg) => (seg.startsWith('{') ? `By${pascal(seg.slice(1, -1))}` : pascal(seg))).join('');
}

export function openApiDocument(routes: Collected[], version: string) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = r.url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
    const s = r.schema;
    const query = s.querystring as { properties?: Record<string, unknown> } | undefined;
    const hasBody = s.body !== undefined || s.consumes !== undefined;
    const op: Record<string, unknown> = {
      operationId: operationIdOf(r.method, path, s.operationId),
      summary: s.summary ?? `${r.method.toUpperCase()} ${path}`,
      tags: s.tags ?? [],
      parameters: [...toParameters(s.params as Record<string, unknown>, 'path'), ...toParameters(s.querystring as Record<string, unknown>, 'query')],
      responses: {
        ...Object.fromEntries(Object.entries((s.response as Record<string, unknown>) ?? {}).map(([code, sch]) => [code, { description: String(code), content: { 'application/json': { schema: sch } } }])),
        ...errorResponses({ method: r.method, path, hasBody, hasQuery: Object.keys(query?.properties ?? {}).length > 0 }),
        default: { description: 'Any other error (5xx included), in the shared error envelope', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
      security: r.tokenExempt ? [{ webhookSecret: [] }] : [{ token: [] }],
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
      securitySchemes: {
        token: { type: 'apiKey', in: 'header', name: 'X-FengYu-Token' },
        webhookSecret: { type: 'apiKey', in: 'header', name: 'X-FengYu-Webhook-Secret', description: 'A webhook trigger’s own secret (webhook deliveries take no host token).' },
      },
      schemas: { Error: ERROR_ENVELOPE },
      responses: errorResponseComponents(),
    },
    paths,
  };
}
