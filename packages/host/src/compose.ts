import { mkdirSync } from 'node:fs';
import pino, { type Logger } from 'pino';
import { z } from 'zod';
import { AgentService } from './agent/agent.service';
import { RunRepository } from './agent/run.repository';
import { type Clock, systemClock } from './clock';
import { type ConfigOptions, type HostConfig, loadConfig } from './config/config';
import { crashPointFor } from './config/crash-points';
import type { HostContext } from './context';
import { EventLog } from './events/event-log';
import { createInboxDomain, createInboxRecorder } from './inbox/inbox.domain';
import { createMcpDomain } from './mcp/mcp.domain';
import { createModelsDomain } from './models/models.domain';
import { createPermissionsDomain } from './permissions/permissions.domain';
import { createPluginsDomain } from './plugins/plugins.domain';
import { openVault } from './secrets/secrets.domain';
import type { CoreServices } from './services';
import { SettingsStore } from './settings/settings.store';
import { migrate, type OpenedDatabase, openConfigured } from './storage/database';
import { registerBackendSettings, callTimeoutOf } from './settings/backend.section';
import { HostLease, leaseMsFrom } from './storage/host-lease';
import { builtinSource } from './tools/builtin/builtin.source';
import { ToolCatalog } from './tools/catalog';
import { createTasksDomain } from './tasks/tasks.domain';
import { ErrorOutboxRepository } from './agent/error-outbox.repository';
import { ErrorWorkflowDispatcher } from './workflows/error-dispatch';
import { createWorkflowsDomain } from './workflows/workflows.domain';

/** SQLite: how stale the record of a crashed host's last moment may be (renewed every fifth of it, 12 s). */
const UPTIME_LEASE_MS = 60_000;

/**
 * The composition root: every service of the host is built here, once, in dependency order,
 * and the typed `HostContext` is returned whole. No HTTP here (`http/server.ts` adds routes).
 *
 * Adding a domain:
 *   1. In its folder, write `create<Name>Domain(deps)` in `<name>.domain.ts`: it takes exactly
 *      the parts it uses (`Pick<CoreServices, …>` plus handles of earlier domains, e.g.
 *      `ctx.workflows`, `agent`), registers its settings sections and tool sources through them,
 *      and returns its handles. It imports neither `context.ts` nor Fastify.
 *   2. Call it in `composeHost` after the domains it needs; add its handles to `HostContext`.
 *   3. Put its routes in `<name>.routes.ts` (a `DomainRegistrar` reading `ctx.<name>`) and add
 *      one line to `domains.ts`.
 */

export interface ComposeOptions extends ConfigOptions {
  clock?: Clock;
  logger?: Logger;
  /** Called after the core is built and before any domain (tests add tool sources). */
  beforeDomains?: (core: CoreServices) => void | Promise<void>;
}

export interface ComposedHost {
  ctx: HostContext;
  /** Stops live runs (recorded as interrupted) and runs the registered cleanups, last first. */
  stop(): Promise<void>;
  /** Closes the database (after the HTTP server has stopped). */
  closeDatabase(): Promise<void>;
}

function createLogger(config: HostConfig): Logger {
  return pino({ level: config.logLevel, redact: ['req.headers["x-fengyu-token"]', 'req.query.token', '*.apiKey', '*.password', '*.secret'] });
}

async function createCore(config: HostConfig, options: ComposeOptions): Promise<{ core: CoreServices; database: OpenedDatabase; closers: Array<() => Promise<void> | void>; uptime: HostLease; lease?: HostLease }> {
  mkdirSync(config.home, { recursive: true });
  const logger = options.logger ?? createLogger(config);
  const clock = options.clock ?? systemClock;
  const database = openConfigured(config);
  await migrate(database.db);
  // a missing or wrong secrets key stops the start here, before anything reads a secret
  const vault = await openVault(database, config, clock).catch(async (err) => {
    await database.close();
    throw err;
  });
  // several hosts may share a PostgreSQL database: each has an id and a lease, and live work names its host
  const lease = database.dialect === 'postgres' ? new HostLease(database.db, clock, logger.child({ component: 'hosts' }), leaseMsFrom(config.env)) : undefined;
  // every host records when it ran (a schedule tells the fires that fell while none ran): on a
  // shared database that is its lease; on SQLite the same row, renewed slowly and never swept
  const uptime = lease ?? new HostLease(database.db, clock, logger.child({ component: 'hosts' }), UPTIME_LEASE_MS);
  await uptime.register();
  const closers: Array<() => Promise<void> | void> = [];
  const settings = new SettingsStore(database.db, clock);
  const crashPoint = crashPointFor(config.crashAt);
  const core: CoreServices = {
    config,
    ...(crashPoint ? { crashPoint } : {}),
    logger,
    clock,
    db: database.db,
    events: new EventLog(database.db, clock, undefined, crashPoint),
    catalog: new ToolCatalog(),
    settings,
    vault,
    runs: new RunRepository(database.db, lease?.id),
    onClose: (fn) => void closers.push(fn),
  };
  return { core, database, closers, uptime, ...(lease ? { lease } : {}) };
}

const localeSchema = z.enum(['en', 'zh-CN']);

/** Builds the whole host (database migrated, bundled plugins installed); nothing listens yet. */
export async function composeHost(options: ComposeOptions = {}): Promise<ComposedHost> {
  const config = loadConfig(options);
  const { core, database, closers, uptime, lease } = await createCore(config, options);
  core.catalog.register(builtinSource(core));
  core.settings.registerSection('locale', { schema: localeSchema, defaultValue: 'en' });
  registerBackendSettings(core.settings, config.callTimeoutSeconds);
  if (options.beforeDomains) await options.beforeDomains(core);

  const plugins = await createPluginsDomain(core);
  const permissions = createPermissionsDomain(core, plugins.hooks);
  const mcp = createMcpDomain(core);
  // Callers read guard and posture through the context at call time (see HostContext).
  const guard = () => ctx.guard;
  const models = createModelsDomain({ ...core, guard, resolveFiles: plugins.resolveFiles });
  const inboxCore = createInboxRecorder(core);
  const agent = new AgentService({
    events: core.events,
    repo: core.runs,
    catalog: core.catalog,
    clock: core.clock,
    logger: core.logger,
    guard,
    posture: () => ctx.posture(),
    maxStepConcurrency: config.maxStepConcurrency,
    callTimeoutSeconds: callTimeoutOf(core.settings, config.callTimeoutSeconds),
    planner: models.planner,
    modelSteps: models.modelSteps,
    filesResolver: plugins.resolveFiles,
    secrets: core.vault,
    ...(lease ? { hostId: lease.id } : {}),
    ...(core.crashPoint ? { crashPoint: core.crashPoint } : {}),
    gates: inboxCore.recorder,
  });
  const inbox = createInboxDomain(core, inboxCore, agent, plugins.callMethod);
  const workflows = createWorkflowsDomain({ ...core, agent });
  const tasks = await createTasksDomain({ ...core, agent, workflows, ...(lease ? { hostId: lease.id } : {}) });
  core.catalog.register(models.memoryTools);
  const outbox = new ErrorOutboxRepository(core.db);
  const dispatcher = new ErrorWorkflowDispatcher({ outbox, runs: core.runs, tasks: tasks.registry, clock: core.clock, logger: core.logger.child({ component: 'error-workflows' }), shared: !!lease, ...(core.crashPoint ? { crashPoint: core.crashPoint } : {}) });
  agent.onRunFailed(() => dispatcher.nudge());
  // stopped before the task executor (closers run last first)
  core.onClose(() => dispatcher.close());

  const ctx: HostContext = { ...core, guard: permissions.guard, posture: () => plugins.posture, agent, permissions, plugins, mcp, workflows, models, tasks: tasks.registry, tasksDomain: tasks, inbox, errorWorkflows: { outbox, dispatcher } };
  if (lease) {
    // Shared database: only the live work of hosts whose lease ran out is interrupted — at start
    // (plus work that names no host) and at every renewal.
    lease.start(async (ids, { unowned }) => {
      await agent.interruptOrphans({ ids, unowned });
      await tasks.sweepHosts?.(ids, unowned);
    });
    await lease.sweep(true);
  } else await agent.interruptOrphans();
  // runs parked at a gate by the last stop wait on, and so do their tasks (single host)
  const adopt = tasks.adoptParked;
  if (adopt) agent.onParkedRun((runId) => adopt(runId));
  await tasks.sweepWaiting?.((runId) => agent.isParked(runId));
  await inbox.start();
  // what failed runs left in the outbox before this start (a crash) is submitted now
  dispatcher.nudge();
  return {
    ctx,
    async stop() {
      await agent.close();
      for (const fn of closers.reverse()) {
        try {
          await fn();
        } catch (err) {
          core.logger.warn({ err }, 'close hook failed');
        }
      }
      await uptime.stop().catch((err) => core.logger.warn({ err }, 'could not record this host stopped'));
    },
    closeDatabase: () => database.close(),
  };
}
