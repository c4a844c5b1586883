import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FengYuError } from '@fengyu/protocol';
import Fastify, { type FastifyInstance } from 'fastify';
import { registerAgentRoutes } from '../agent/agent.routes';
import { type ComposeOptions, composeHost } from '../compose';
import type { HostContext } from '../context';
import { DOMAINS } from '../domains';
import { registerSettingsRoutes } from '../settings/settings.routes';
import { DEFAULT_OWNER, loadPrimaryToken, TokenVerifier } from './auth';
import { sendError } from './errors';
import { frontDoorRewriteUrl, installFrontDoor } from './front-door';
import { collectRoutes, openApiDocument } from './openapi';
import { requestLoggerFactory } from './request-logger';
import { typedRoutes } from './route-types';
import { serveUi } from './static';
import { type RouteValidatorCompiler, routeValidatorCompiler } from './validation';

declare module 'fastify' {
  interface FastifyRequest {
    owner: string;
  }
  /** Documentation fields read by the OpenAPI generator. */
  interface FastifySchema {
    summary?: string;
    description?: string;
    tags?: string[];
    hide?: boolean;
    consumes?: string[];
  }
}

export interface HostOptions extends ComposeOptions {
  /** Skip writing host.json (tests running several hosts on one home do not need it). */
  writeHostFile?: boolean;
}

export interface Host {
  url: string;
  port: number;
  token: string;
  ctx: HostContext;
  app: FastifyInstance;
  /** The routes' request validators (compiled on first use; `compileAll()` compiles the rest). */
  validators: RouteValidatorCompiler;
  close(): Promise<void>;
}

import { VERSION } from './version';

export { VERSION };
const BODY_LIMIT = 1024 * 1024;

/** Assembles a real host: the services (`compose.ts`), then HTTP; listens on loopback. */
export async function createHost(options: HostOptions = {}): Promise<Host> {
  const composed = await composeHost(options);
  const { ctx } = composed;
  const { config, logger, clock } = ctx;
  const token = loadPrimaryToken(config.home, config.token);
  const verifier = new TokenVerifier(ctx.db, token);

  const app = Fastify({ loggerInstance: logger.child({ component: 'http' }), childLoggerFactory: requestLoggerFactory, bodyLimit: BODY_LIMIT, rewriteUrl: frontDoorRewriteUrl }) as unknown as FastifyInstance;
  const validators = routeValidatorCompiler();
  app.setValidatorCompiler(validators);
  const routes = collectRoutes(app);
  app.decorateRequest('owner', '');
  app.setErrorHandler((err, req, reply) => sendError(err, req, reply));
  app.setNotFoundHandler((req, reply) => sendError(new FengYuError('route_not_found', { method: req.method, url: req.url.split('?')[0] }), req, reply));
  installFrontDoor(app, verifier, BODY_LIMIT);
  // a callback hook: no promise per response
  app.addHook('onSend', (_req, reply, payload, done) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
    // no page may frame the UI or an API answer (clickjacking): both headers, for old and new browsers
    reply.header('x-frame-options', 'DENY');
    if (!reply.hasHeader('content-security-policy')) reply.header('content-security-policy', "frame-ancestors 'none'");
    done(null, payload);
  });

  registerSettingsRoutes(ctx, app);
  registerAgentRoutes(ctx, app, ctx.runs);
  typedRoutes(app).post('/api/owners', { schema: { summary: 'Create an owner with its own token (default owner only)', tags: ['auth'], body: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } as const } }, async (req) => {
    if (req.owner !== DEFAULT_OWNER) throw new FengYuError('forbidden', { reason: 'only the default owner creates owners' });
    return verifier.createOwner(req.body.name, new Date(clock.now()).toISOString());
  });
  app.get('/api/health', { schema: { summary: 'Liveness and version', tags: ['host'] } }, async () => ({ ok: true, version: VERSION, posture: ctx.posture() }));
  for (const d of DOMAINS) {
    const register = await d.load();
    await register(ctx, app);
  }
  app.get('/api/openapi.json', { schema: { summary: 'This OpenAPI document', tags: ['host'] } }, async () => openApiDocument(routes, VERSION));
  serveUi(app, config.uiDir);

  await app.listen({ host: config.host, port: config.port });
  // tasks the last stop left queued (never started) are queued again once every domain follows task ends
  const requeued = await ctx.tasksDomain?.registry.resumeQueued?.();
  if (requeued) logger.info({ requeued }, 'background tasks left queued by the last stop were queued again');
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://127.0.0.1:${port}`;
  ctx.inbox.listeningAt(url);
  const hostFile = join(config.home, 'host.json');
  if (options.writeHostFile !== false) writeFileSync(hostFile, JSON.stringify({ url, port, pid: process.pid }, null, 2));

  let closed = false;
  return {
    url,
    port,
    token,
    ctx,
    app,
    validators,
    async close() {
      if (closed) return;
      closed = true;
      await composed.stop();
      await app.close();
      await composed.closeDatabase();
      if (options.writeHostFile !== false) removeOwnHostFile(hostFile);
    },
  };
}

/** A clean stop removes host.json, unless another host has written its own there since. */
function removeOwnHostFile(file: string): void {
  try {
    if ((JSON.parse(readFileSync(file, 'utf8')) as { pid?: unknown }).pid === process.pid) rmSync(file, { force: true });
  } catch {
    // already gone, or not ours to judge
  }
}
