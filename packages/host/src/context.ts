import type { FastifyInstance } from 'fastify';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { AgentService } from './agent/agent.service';
import type { HostConfig } from './config/config';
import type { EventLog } from './events/event-log';
import type { PermissionGuard } from './permissions/types';
import type { SettingsStore } from './settings/settings.store';
import type { ToolCatalog } from './tools/catalog';

/** Clock and id sources are injected so pure cores and tests stay deterministic. */
export interface Clock {
  now(): number;
}

/** How plugins are isolated right now (recorded on every run). */
export interface SandboxPosture {
  mode: 'sandboxed' | 'unsandboxed';
  backend: string;
}

/**
 * Everything a domain needs, assembled once by `createHost`. Domains receive it in their
 * `register*` function, add routes to `app`, tool sources to `catalog`, settings sections to
 * `settings`, and may replace the `guard` (the permissions domain does).
 */
export interface HostContext {
  config: HostConfig;
  logger: Logger;
  clock: Clock;
  // biome-ignore lint/suspicious/noExplicitAny: each repository narrows with withTables<>()
  db: Kysely<any>;
  events: EventLog;
  catalog: ToolCatalog;
  settings: SettingsStore;
  /** The one permission guard; replaced by the permissions domain at assembly. */
  guard: PermissionGuard;
  agent: AgentService;
  /** Plugin isolation posture; the plugins domain replaces this function. */
  posture: () => SandboxPosture;
  /** Registers cleanup run by `host.close()` (reverse order). */
  onClose(fn: () => Promise<void> | void): void;
}

/** A domain's entry point, called once by `createHost` in a fixed order. */
export type DomainRegistrar = (ctx: HostContext, app: FastifyInstance) => Promise<void> | void;
