import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { type CrashAt, parseCrashAt } from './crash-points';

/**
 * Host configuration, parsed once from the environment and explicit options. This is the only
 * module that reads `process.env`; everything else receives a `HostConfig`.
 */

const EnvSchema = z.object({
  FENGYU_HOME: z.string().optional(),
  FENGYU_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  FENGYU_TOKEN: z.string().min(16).optional(),
  FENGYU_SANDBOX: z.enum(['auto', 'off', 'bwrap']).optional(),
  FENGYU_MAX_STEP_CONCURRENCY: z.coerce.number().int().min(1).max(64).optional(),
  FENGYU_LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).optional(),
  FENGYU_DB: z.enum(['file', 'memory']).optional(),
  // A shared deployment: PostgreSQL instead of the embedded SQLite file.
  FENGYU_DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\/\S+$/, 'FENGYU_DATABASE_URL must be a postgres:// or postgresql:// URL')
    .optional(),
  FENGYU_DB_SYNC: z.enum(['normal', 'full']).optional(),
  // How often an open SSE stream (a run's, a chat's) carries a `: keep-alive` comment.
  FENGYU_SSE_HEARTBEAT_MS: z.coerce.number().int().min(10).max(600_000).optional(),
  // The served host's idle-release tick (cli/idle-release.ts: its quiet spells are counted in ticks).
  FENGYU_IDLE_RELEASE_TICK_MS: z.coerce.number().int().min(200).max(60_000).optional(),
  // The secrets vault's key, instead of $FENGYU_HOME/secrets.key (checked where it is parsed).
  FENGYU_SECRETS_KEY: z.string().optional(),
  OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: z.string().optional(),
  // crash tests (docs/reliability.md): `<point>[:<n>]`, checked by parseCrashAt
  FENGYU_CRASH_AT: z.string().optional(),
  // `1`: `fengyu serve` prints where its start's time went (docs/benchmarks.md, cold start)
  FENGYU_START_TRACE: z.string().optional(),
});

export interface HostConfig {
  home: string;
  port: number;
  host: '127.0.0.1';
  /** A fixed token (FENGYU_TOKEN); otherwise the token file under home is used/created. */
  token?: string;
  sandbox: 'auto' | 'off' | 'bwrap';
  /** Steps of one run executing at once. */
  maxStepConcurrency: number;
  logLevel: string;
  /** `memory` keeps the database in memory (benchmarks only: measures what durability costs). */
  database: 'file' | 'memory';
  /** A PostgreSQL connection URL: the shared database of several hosts (SQLite when absent). */
  databaseUrl?: string;
  /** SQLite `synchronous` in WAL mode: `normal` (default) survives a process crash; `full` also a power loss. */
  dbSync: 'normal' | 'full';
  /** Where bundled plugin packages (.fyp) are looked for at first start. */
  bundledPluginDirs: string[];
  /** Built web UI to serve at `/`. */
  uiDir: string;
  /** Default per-call tool timeout (seconds) when a tool declares none. */
  callTimeoutSeconds: number;
  /** How long a call of the MCP server waits for its workflow run before answering with the run id. */
  mcpCallPatienceMs: number;
  /** How often an open SSE stream carries a `: keep-alive` comment (ms; 15 s unless set, so proxies and browsers keep it open). */
  sseHeartbeatMs: number;
  /**
   * The tick of a served host's idle release (ms; 1 s unless set): its quiet spells (2 ticks before
   * the first collection, 30 before the second) scale with it. At 200 ms, the least, the second
   * spell is 6 s, still longer than V8's 5 s allocation-rate window it waits out.
   */
  idleReleaseTickMs: number;
  otlpMetricsEndpoint?: string;
  /** Crash tests: the labelled point (and pass) at which the host SIGKILLs itself (`FENGYU_CRASH_AT`). */
  crashAt?: CrashAt;
  /** The secrets key's text (FENGYU_SECRETS_KEY); otherwise `$home/secrets.key` is used or created. */
  secretsKey?: string;
  /**
   * `FENGYU_START_TRACE=1`: `fengyu serve` prints on stderr where its start's time went since the
   * process began (code loaded, listening; wall and CPU ms). Off unless set to exactly `1`.
   */
  startTrace: boolean;
  /**
   * The environment the configuration was read from: the one copy other modules get (child
   * processes' environments are built from it, e.g. `process/env.ts`); nothing else reads `process.env`.
   */
  env: Readonly<Record<string, string | undefined>>;
}

export interface ConfigOptions {
  home?: string;
  port?: number;
  token?: string;
  sandbox?: HostConfig['sandbox'];
  maxStepConcurrency?: number;
  logLevel?: string;
  database?: HostConfig['database'];
  databaseUrl?: string;
  dbSync?: HostConfig['dbSync'];
  bundledPluginDirs?: string[];
  uiDir?: string;
  callTimeoutSeconds?: number;
  mcpCallPatienceMs?: number;
  sseHeartbeatMs?: number;
  idleReleaseTickMs?: number;
  crashAt?: CrashAt;
  secretsKey?: string;
  startTrace?: boolean;
  env?: Record<string, string | undefined>;
}

const repoRoot = resolve(import.meta.dirname, '../../../..');

export function loadConfig(options: ConfigOptions = {}): HostConfig {
  const env = options.env ?? process.env;
  const parsed = EnvSchema.parse(Object.fromEntries(Object.entries(env).filter(([k]) => k in EnvSchema.shape)));
  return {
    home: resolve(options.home ?? parsed.FENGYU_HOME ?? join(homedir(), '.fengyu')),
    port: options.port ?? parsed.FENGYU_PORT ?? 7878,
    host: '127.0.0.1',
    token: options.token ?? parsed.FENGYU_TOKEN,
    sandbox: options.sandbox ?? parsed.FENGYU_SANDBOX ?? 'auto',
    maxStepConcurrency: options.maxStepConcurrency ?? parsed.FENGYU_MAX_STEP_CONCURRENCY ?? 8,
    logLevel: options.logLevel ?? parsed.FENGYU_LOG_LEVEL ?? 'warn',
    database: options.database ?? parsed.FENGYU_DB ?? 'file',
    databaseUrl: options.databaseUrl ?? parsed.FENGYU_DATABASE_URL,
    dbSync: options.dbSync ?? parsed.FENGYU_DB_SYNC ?? 'normal',
    bundledPluginDirs: options.bundledPluginDirs ?? [join(repoRoot, 'packages/plugins/excel/dist'), join(repoRoot, 'packages/plugins/email/dist')],
    uiDir: options.uiDir ?? join(repoRoot, 'packages/ui/dist'),
    callTimeoutSeconds: options.callTimeoutSeconds ?? 120,
    mcpCallPatienceMs: options.mcpCallPatienceMs ?? 50_000,
    sseHeartbeatMs: options.sseHeartbeatMs ?? parsed.FENGYU_SSE_HEARTBEAT_MS ?? 15_000,
    idleReleaseTickMs: options.idleReleaseTickMs ?? parsed.FENGYU_IDLE_RELEASE_TICK_MS ?? 1000,
    otlpMetricsEndpoint: parsed.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT,
    ...crashAtOf(options.crashAt, parsed.FENGYU_CRASH_AT),
    secretsKey: options.secretsKey ?? parsed.FENGYU_SECRETS_KEY,
    startTrace: options.startTrace ?? parsed.FENGYU_START_TRACE === '1',
    env,
  };
}

/** An unknown point stops start-up here, before anything is opened. */
function crashAtOf(given: CrashAt | undefined, text: string | undefined): { crashAt?: CrashAt } {
  if (given) return { crashAt: given };
  return text ? { crashAt: parseCrashAt(text) } : {};
}
