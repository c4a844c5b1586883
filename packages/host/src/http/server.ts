import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FengYuError } from '@fengyu/protocol';
import Fastify, { type FastifyInstance } from 'fastify';
import pino, { type Logger } from 'pino';
import { AgentService } from '../agent/agent.service';
import { registerAgentRoutes } from '../agent/agent.routes';
import { RunRepository } from '../agent/run.repository';
import { type ConfigOptions, type HostConfig, loadConfig } from '../config/config';
import type { Clock, HostContext } from '../context';
import { DOMAINS } from '../domains';
import { EventLog } from '../events/event-log';
import { modeOnlyGuard } from '../permissions/mode-default';
import { registerSettingsRoutes } from '../settings/settings.routes';
import { SettingsStore } from '../settings/settings.store';
import { migrate, openDatabase } from '../storage/database';
import { builtinSource } from '../tools/builtin/builtin.source';
import { ToolCatalog } from '../tools/catalog';
import { DEFAULT_OWNER, loadPrimaryToken, TokenVerifier } from './auth';
import { sendError } from './errors';
import { frontDoorRewriteUrl, installFrontDoor } from './front-door';
import { collectRoutes, openApiDocument } from './openapi';
import { serveUi } from './static';
import { routeValidatorCompiler } from './validation';

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

export interface HostOptions extends ConfigOptions {
  clock?: Clock;
  logger?: Logger;
  /** Skip writing host.json (tests running several hosts on one home do not need it). */
  writeHostFile?: boolean;
  /** Called after the core is assembled and before domains register (tests add tool sources). */
  beforeDomains?: (ctx: HostContext) => void | Promise<void>;
}

export interface Host {
  url: string;
  port: number;
  token: string;
  ctx: HostContext;
  app: FastifyInstance;
  close(): Promise<void>;
}

export const VERSION = '0.1.0';
const BODY_LIMIT = 1024 * 1024;

/** Assembles a real host: database, event log, catalog, domains, HTTP; listens on loopback. */
export async function createHost(options: HostOptions = {}): Promise<Host> {
  const config: HostConfig = loadConfig(options);
  mkdirSync(config.home, { recursive: true });
  const logger = options.logger ?? pino({ level: config.logLevel, redact: ['req.headers["x-fengyu-token"]', 'req.query.token', '*.apiKey', '*.password', '*.secret'] });
  const clock = options.clock ?? { now: () => Date.now() };
  const database = openDatabase(config.home, config.database);
  await migrate(database.db);
  const token = loadPrimaryToken(config.home, config.token);
  const verifier = new TokenVerifier(database.db, token);
  const closers: Array<() => Promise<void> | void> = [];
  const events = new EventLog(database.db, clock);
  const catalog = new ToolCatalog();
  const settings = new SettingsStore(database.db, clock);
  const repo = new RunRepository(database.db);
  const ctx = {
    config,
    logger,
    clock,
    db: database.db,
    events,
    catalog,
    settings,
    guard: modeOnlyGuard,
    posture: () => ({ mode: 'unsandboxed', backend: 'none' }),
    onClose: (fn: () => Promise<void> | void) => closers.push(fn),
  } as unknown as HostContext;
  ctx.agent = new AgentService({
    events,
    repo,
    catalog,
    clock,
    logger,
    guard: () => ctx.guard,
    posture: () => ctx.posture(),
    maxStepConcurrency: config.maxStepConcurrency,
    callTimeoutSeconds: config.callTimeoutSeconds,
  });

  const app = Fastify({ loggerInstance: logger.child({ component: 'http' }), bodyLimit: BODY_LIMIT, rewriteUrl: frontDoorRewriteUrl }) as unknown as FastifyInstance;
  app.setValidatorCompiler(routeValidatorCompiler());
  const routes = collectRoutes(app);
  app.decorateRequest('owner', '');
  app.setErrorHandler((err, req, reply) => sendError(err, req, reply));
  app.setNotFoundHandler((req, reply) => sendError(new FengYuError('route_not_found', { method: req.method, url: req.url.split('?')[0] }), req, reply));
  installFrontDoor(app, verifier, BODY_LIMIT);
  app.addHook('onSend', async (_req, reply) => {
    reply.header('x-content-type-options', 'nosniff');
    reply.header('referrer-policy', 'no-referrer');
  });

  ctx.catalog.register(builtinSource(ctx));
  registerSettingsRoutes(ctx, app);
  registerAgentRoutes(ctx, app, repo);
  app.post('/api/owners', { schema: { summary: 'Create an owner with its own token (default owner only)', tags: ['auth'], body: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } } } }, async (req) => {
    if (req.owner !== DEFAULT_OWNER) throw new FengYuError('forbidden', { reason: 'only the default owner creates owners' });
    return verifier.createOwner((req.body as { name: string }).name, new Date(clock.now()).toISOString());
  });
  app.get('/api/health', { schema: { summary: 'Liveness and version', tags: ['host'] } }, async () => ({ ok: true, version: VERSION, posture: ctx.posture() }));
  if (options.beforeDomains) await options.beforeDomains(ctx);
  for (const d of DOMAINS) {
    const register = await d.load();
    await register(ctx, app);
  }
  app.get('/api/openapi.json', { schema: { summary: 'This OpenAPI document', tags: ['host'] } }, async () => openApiDocument(routes, VERSION));
  serveUi(app, config.uiDir);

  await ctx.agent.interruptOrphans();
  await app.listen({ host: config.host, port: config.port });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  const url = `http://127.0.0.1:${port}`;
  if (options.writeHostFile !== false) writeFileSync(join(config.home, 'host.json'), JSON.stringify({ url, port, pid: process.pid }, null, 2));

  let closed = false;
  return {
    url,
    port,
    token,
    ctx,
    app,
    async close() {
      if (closed) return;
      closed = true;
      await ctx.agent.close();
      for (const fn of closers.reverse()) {
        try {
          await fn();
        } catch (err) {
          logger.warn({ err }, 'close hook failed');
        }
      }
      await app.close();
      await database.close();
    },
  };
}
