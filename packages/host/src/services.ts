import type { Logger } from 'pino';
import type { RunRepository } from './agent/run.repository';
import type { Clock } from './clock';
import type { HostConfig } from './config/config';
import type { CrashPoint } from './config/crash-points';
import type { EventLog } from './events/event-log';
import type { Vault } from './secrets/vault';
import type { SettingsStore } from './settings/settings.store';
import type { Db } from './storage/database';
import type { ToolCatalog } from './tools/catalog';

/**
 * The core every domain may depend on, built first by the composition root (`compose.ts`).
 * Domains take the parts they use (`Pick<CoreServices, …>`), never the whole host context, so
 * a domain's service files import nothing of the host's assembly.
 */
export interface CoreServices {
  readonly config: HostConfig;
  /** Crash tests: called at each labelled point (docs/reliability.md); undefined unless `FENGYU_CRASH_AT` is set. */
  readonly crashPoint?: CrashPoint;
  readonly logger: Logger;
  readonly clock: Clock;
  /** The database; each repository narrows it with `withTables<>()`. */
  readonly db: Db;
  readonly events: EventLog;
  readonly catalog: ToolCatalog;
  readonly settings: SettingsStore;
  /** The encrypted secrets vault (named secrets and other domains' internal values). */
  readonly vault: Vault;
  /** Run and step-execution rows (projections of the event log). */
  readonly runs: RunRepository;
  /** Registers cleanup run by `host.close()` (reverse order). */
  onClose(fn: () => Promise<void> | void): void;
}
