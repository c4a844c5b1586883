import type { IncomingMessage } from 'node:http';
import { FengYuError, findForbiddenKey } from '@fengyu/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isLoopbackHost } from './auth';
import { duplicateQueryKey, isMiscasedProtectedPath, isOwnOrigin, isProtectedPath, jsonDepthExceeds, normalizePath, repeatedSingleHeader, splitTarget } from './request-path';

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
  /** The owner a token belongs to, or undefined; a promise when it must be looked up. */
  ownerOf(token: string | undefined): string | undefined | PromiseLike<string | undefined>;
}

/** Deepest JSON nesting (objects and arrays) accepted in a request body. */
export const JSON_MAX_DEPTH = 128;
/** The GET routes that accept `?token=` by name. */
const STREAM_ROUTES = new Set(['/api/agent/stream', '/api/inbox/stream']);
/** Keys refused anywhere in a JSON body: assigning them can replace an object's prototype. */
const FORBIDDEN_KEYS: readonly string[] = ['__proto__'];

/** What the front door read of a request's target before routing: its normalized path's segments and its query, or why it is refused. */
interface Target {
  segments: string[];
  query: string;
  refused?: FengYuError;
}
/** The request's `Target`, kept on the request itself (one property, no lookup table per request). */
const TARGET = Symbol('fengyu.frontDoorTarget');
type MarkedRequest = IncomingMessage & { [TARGET]?: Target };

/**
 * Runs before routing: replaces the request target's path with its normalized form, or marks
 * the request refused (answered by the front-door hook before any handler runs).
 */
export function frontDoorRewriteUrl(req: IncomingMessage): string {
  const { path, query } = splitTarget(req.url ?? '/');
  const normalized = normalizePath(path);
  if (!normalized.ok) {
    (req as MarkedRequest)[TARGET] = { segments: [], query, refused: new FengYuError('invalid_path', { path: path.length > 200 ? `${path.slice(0, 200)}…` : path }) };
    return '/';
  }
  (req as MarkedRequest)[TARGET] = { segments: normalized.segments, query };
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
  // A callback hook: a request with the primary token (or none) passes without a promise.
  app.addHook('onRequest', (req, _reply, done) => {
    const owner = admit(req, options);
    if (owner === PUBLIC) done();
    else if (typeof owner === 'string' || owner === undefined) seat(req, owner, done);
    else owner.then((o) => seat(req, o, done), done);
  });
}

/** A request the token check does not apply to. */
const PUBLIC = Symbol('public');

/**
 * The front door's checks in order — a refused path, the Host, the Origin, a duplicated query
 * parameter — then the token: `PUBLIC` when the request needs none, otherwise the owner of the
 * token it presents (undefined: none), looked up when not known at once. Throws what refuses it.
 */
function admit(req: FastifyRequest, options: FrontDoorOptions): typeof PUBLIC | string | undefined | PromiseLike<string | undefined> {
  const target = (req.raw as MarkedRequest)[TARGET];
  if (target?.refused) throw target.refused;
  const repeated = repeatedSingleHeader(req.raw.rawHeaders);
  if (repeated !== undefined) throw new FengYuError('duplicate_header', { name: repeated });
  if (!isLoopbackHost(req.headers.host)) throw new FengYuError('forbidden_host', { host: String(req.headers.host ?? '') });
  const origin = req.headers.origin;
  if (origin !== undefined && !isOwnOrigin(origin, req.socket.localPort ?? 0)) throw new FengYuError('forbidden_origin', { origin: String(origin), port: req.socket.localPort ?? 0 });
  const dup = duplicateQueryKey(target ? target.query : splitTarget(req.url).query);
  if (dup !== undefined) throw new FengYuError('duplicate_query_parameter', { name: dup });
  const segments = target?.segments ?? routeSegments(splitTarget(req.url).path);
  const routeUrl = req.routeOptions.url;
  if (!isProtectedPath(segments) && !isProtectedPath(routeSegments(routeUrl))) return PUBLIC;
  const config = (req.routeOptions.config ?? {}) as FrontDoorRouteConfig;
  if (config.tokenExempt === 'webhook-secret' && routeUrl !== undefined) return PUBLIC;
  return options.ownerOf(presentedToken(req, routeUrl, config));
}

/** Admits a request whose token belongs to `owner` (none: 401) as that owner. */
function seat(req: FastifyRequest, owner: string | undefined, done: (err?: Error) => void): void {
  if (!owner) return done(new FengYuError('unauthorized'));
  const segments = (req.raw as MarkedRequest)[TARGET]?.segments ?? routeSegments(splitTarget(req.url).path);
  if (isMiscasedProtectedPath(segments)) return done(new FengYuError('route_not_found', { method: req.method, url: splitTarget(req.url).path }));
  req.owner = owner;
  done();
}
