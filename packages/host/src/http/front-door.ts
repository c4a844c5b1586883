import type { IncomingMessage } from 'node:http';
import { FengYuError, findForbiddenKey } from '@fengyu/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isLoopbackHost } from './auth';
import { duplicateQueryKey, isMiscasedProtectedPath, isOwnOrigin, isProtectedPath, jsonDepthExceeds, normalizePath, splitTarget } from './request-path';

/**
 * The front door: every request passes here before any handler. In order: the path is
 * normalized before routing (so the router and the token check read the same path), then the
 * Host and Origin checks, the query-string check, and the token check. Which routes need the
 * token is decided by the normalized path *and* by the matched route, so no spelling of a path
 * reaches an `/api` handler without it.
 *
 * Per-route options (Fastify route `config`):
 * - `tokenExempt: 'webhook-secret'` — the route authenticates the caller itself (a webhook's
 *   own secret); it skips the host token but not the Host and Origin checks;
 * - `bearerAuth: true` — also accepts `Authorization: Bearer <token>`;
 * - `queryToken: true` — a GET stream route that also accepts `?token=` (EventSource cannot set
 *   headers). `/api/agent/stream` is such a route by name.
 */

export interface FrontDoorRouteConfig {
  tokenExempt?: 'webhook-secret';
  bearerAuth?: boolean;
  queryToken?: boolean;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    tokenExempt?: 'webhook-secret';
    bearerAuth?: boolean;
    queryToken?: boolean;
  }
}

export interface FrontDoorOptions {
  /** The owner a token belongs to, or undefined. */
  ownerOf(token: string | undefined): Promise<string | undefined>;
}

/** Deepest JSON nesting (objects and arrays) accepted in a request body. */
export const JSON_MAX_DEPTH = 128;
/** The GET routes that accept `?token=` by name. */
const STREAM_ROUTES = new Set(['/api/agent/stream']);
/** Keys refused anywhere in a JSON body: assigning them can replace an object's prototype. */
const FORBIDDEN_KEYS: readonly string[] = ['__proto__'];

const refused = new WeakMap<IncomingMessage, FengYuError>();
const pathSegments = new WeakMap<IncomingMessage, string[]>();

/**
 * Runs before routing: replaces the request target's path with its normalized form, or marks
 * the request refused (answered by the front-door hook before any handler runs).
 */
export function frontDoorRewriteUrl(req: IncomingMessage): string {
  const { path, query } = splitTarget(req.url ?? '/');
  const normalized = normalizePath(path);
  if (!normalized.ok) {
    refused.set(req, new FengYuError('invalid_path', { path: path.length > 200 ? `${path.slice(0, 200)}…` : path }));
    pathSegments.set(req, []);
    return '/';
  }
  pathSegments.set(req, normalized.segments);
  return query ? `${normalized.path}?${query}` : normalized.path;
}

function presentedToken(req: FastifyRequest, routeUrl: string | undefined, config: FrontDoorRouteConfig): string | undefined {
  const header = req.headers['x-fengyu-token'];
  if (typeof header === 'string' && header !== '') return header;
  if (config.bearerAuth === true) {
    const m = /^Bearer +(\S+)$/i.exec(req.headers.authorization ?? '');
    if (m) return m[1];
  }
  if (req.method === 'GET' && routeUrl !== undefined && (STREAM_ROUTES.has(routeUrl) || config.queryToken === true)) {
    const t = (req.query as { token?: unknown } | undefined)?.token;
    if (typeof t === 'string') return t;
  }
  return undefined;
}

function routeSegments(url: string | undefined): string[] {
  return (url ?? '').split('/').filter((s) => s !== '');
}

/** Parses a JSON body: empty → undefined; too deep, malformed or carrying `__proto__` → 400. */
export function parseJsonBody(body: string): unknown {
  if (body.trim() === '') return undefined;
  if (jsonDepthExceeds(body, JSON_MAX_DEPTH)) throw new FengYuError('json_too_deep', { limit: JSON_MAX_DEPTH });
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (err) {
    throw new FengYuError('invalid_json', { reason: (err as Error).message });
  }
  const bad = findForbiddenKey(value, FORBIDDEN_KEYS);
  if (bad) throw new FengYuError('forbidden_key', { key: bad.key, path: bad.path });
  return value;
}

/** Installs the JSON body parser and the front-door hook on the app. */
export function installFrontDoor(app: FastifyInstance, options: FrontDoorOptions, bodyLimit: number): void {
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit }, (_req, body, done) => {
    try {
      done(null, parseJsonBody(body as string));
    } catch (err) {
      done(err as Error);
    }
  });
  app.addHook('onRequest', async (req) => {
    const bad = refused.get(req.raw);
    if (bad) throw bad;
    if (!isLoopbackHost(req.headers.host)) throw new FengYuError('forbidden_host', { host: String(req.headers.host ?? '') });
    const origin = req.headers.origin;
    if (origin !== undefined && !isOwnOrigin(origin, req.socket.localPort ?? 0)) throw new FengYuError('forbidden_origin', { origin: String(origin), port: req.socket.localPort ?? 0 });
    const dup = duplicateQueryKey(splitTarget(req.url).query);
    if (dup !== undefined) throw new FengYuError('duplicate_query_parameter', { name: dup });
    const segments = pathSegments.get(req.raw) ?? routeSegments(splitTarget(req.url).path);
    const routeUrl = req.routeOptions.url;
    if (!isProtectedPath(segments) && !isProtectedPath(routeSegments(routeUrl))) return;
    const config = (req.routeOptions.config ?? {}) as FrontDoorRouteConfig;
    if (config.tokenExempt === 'webhook-secret' && routeUrl !== undefined) return;
    const owner = await options.ownerOf(presentedToken(req, routeUrl, config));
    if (!owner) throw new FengYuError('unauthorized');
    if (isMiscasedProtectedPath(segments)) throw new FengYuError('route_not_found', { method: req.method, url: splitTarget(req.url).path });
    req.owner = owner;
  });
}
