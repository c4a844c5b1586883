import type { InputVault } from '../agent/secret-inputs';
import { FileRepository } from '../files/file.repository';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { CrashPoint } from '../config/crash-points';
import type { AgentService } from '../agent/agent.service';
import { RunRepository } from '../agent/run.repository';
import { type Clock, systemClock } from '../clock';
import { killRunProcesses } from '../process/spawn';
import type { Db } from '../storage/database';
import type { ToolCatalog } from '../tools/catalog';
import type { WorkflowsDomain } from '../workflows/workflows.domain';
import { FairQueue } from './fair-queue';
import type { GateParking } from '../agent/gates';
import { SharedTaskRegistry } from './shared-task-registry';
import { runProcesses, signalRunProcesses } from './run-processes';
import { SqliteTaskStore } from './task.store';
import { taskToolSource } from './task.tools';
import { OtlpPusher, parseOtlpHeaders, TaskMetrics } from './task-metrics';
import { TaskEngine } from './task-engine';
import type { TaskExecutor } from './task-executor';
import { KILL_GRACES_MS, type ProcessKiller } from './task-common';
import { TaskRegistry } from './task-registry';
import { registerTaskErrors } from './tasks.errors';
import { WorkflowTaskBody } from './workflow-task-body';

/**
 * The background tasks domain's services: the executor (fair queue + SQLite store + workflow
 * bodies), the task tools in the catalog, the metrics registry and, when an OTLP metrics endpoint
 * is configured, the OTLP push. No HTTP here (`tasks.routes.ts`).
 */

export interface TasksDeps {
  config: { env: Readonly<Record<string, string | undefined>>; databaseUrl?: string };
  /** This host process's id on a shared database (with `config.databaseUrl`): tasks go through the shared queue. */
  hostId?: string;
  logger: Logger;
  clock: Clock;
  db: Db;
  catalog: ToolCatalog;
  agent: AgentService;
  workflows: Pick<WorkflowsDomain, 'service' | 'runner' | 'base'>;
  /** Keeps a task's secret input values (docs/secrets.md); without it a task keeps none (the run sees the marker). */
  vault?: InputVault;
  onClose(fn: () => Promise<void> | void): void;
  /** Crash tests (docs/reliability.md). */
  crashPoint?: CrashPoint;
}

export interface TasksDomain {
  registry: TaskExecutor;
  metrics: TaskMetrics;
  /** Shared database: records the running tasks of dead hosts interrupted (see `HostLease`). */
  sweepHosts?(hostIds: string[], unowned: boolean): Promise<number>;
  /** Single host, at start: waiting tasks whose run is not parked at its gate are interrupted. */
  sweepWaiting?(parked: (runId: string) => Promise<boolean>): Promise<number>;
  /** The waiting task of a parked run whose gate was answered (on a shared database, by this host), live again. */
  adoptParked?(runId: string): Promise<GateParking | undefined>;
}

/** Drift from the wall clock past which the fine clock re-anchors (a step of the system time). */
const REANCHOR_MS = 5;

/**
 * Wall-clock milliseconds with a sub-millisecond fraction, from the monotonic clock anchored to
 * the wall clock: queue waits are often well under a millisecond, and whole milliseconds would
 * report them as 0. Re-anchors when the wall clock was stepped.
 */
export function fineClock(): Clock {
  let offset = Date.now() - performance.now();
  return {
    now: () => {
      const p = performance.now();
      const wall = Date.now();
      if (Math.abs(wall - (offset + p)) > REANCHOR_MS) offset = wall - p;
      return offset + p;
    },
  };
}

export async function createTasksDomain(ctx: TasksDeps): Promise<TasksDomain> {
  const { workflows } = ctx;
  registerTaskErrors();
  let capacity: () => ReturnType<TaskExecutor['globalCapacity']> = () => {
    throw new Error('no executor yet');
  };
  const metrics = new TaskMetrics(() => capacity());
  const body = new WorkflowTaskBody({
    agent: ctx.agent,
    service: workflows.service,
    runner: workflows.runner,
    runs: new RunRepository(ctx.db),
    baseCatalog: (o) => workflows.base.snapshot(o),
    db: ctx.db,
    files: new FileRepository(ctx.db),
    ...(ctx.vault ? { vault: ctx.vault } : {}),
  });
  const killProcesses: ProcessKiller = {
    count: (runId) => runProcesses(runId).length,
    signal: (runId, sig) => {
      // the groups the spawn helper started for the run (SIGTERM, then SIGKILL after its grace) …
      if (sig === 'SIGTERM') void killRunProcesses(runId, { graceMs: KILL_GRACES_MS.term }).catch(() => undefined);
      // … and every process that still carries the run's id, also outside those groups
      return signalRunProcesses(runId, sig);
    },
  };
  const logger = ctx.logger.child({ component: 'tasks' });
  let registry: TaskExecutor;
  let shared: SharedTaskRegistry | undefined;
  // running slots one owner may hold (default 12 of 16: the rest stay free for other owners)
  const cap = Number(ctx.config.env.FENGYU_TASK_OWNER_MAX_RUNNING);
  const limits = Number.isInteger(cap) && cap >= 1 ? { ownerMaxRunning: cap } : {};
  if (ctx.config.databaseUrl && ctx.hostId) {
    // several hosts, one queue: the job engine is loaded only here
    const engine = await TaskEngine.start(ctx.config.databaseUrl, logger);
    const slots = Number(ctx.config.env.FENGYU_TASK_WORKER_SLOTS);
    const workerSlots = Number.isInteger(slots) && slots >= 1 ? slots : undefined;
    shared = new SharedTaskRegistry({ db: ctx.db, url: ctx.config.databaseUrl, hostId: ctx.hostId, engine, clock: ctx.clock, logger, body, metrics, killProcesses, limits, letGo: (runId, commit) => ctx.agent.letGo(runId, commit), ...(workerSlots ? { workerSlots } : {}) });
    registry = shared;
  } else {
    const policy = new FairQueue(limits);
    registry = new TaskRegistry({ store: new SqliteTaskStore(ctx.db), policy, clock: ctx.clock === systemClock ? fineClock() : ctx.clock, logger, body, metrics, killProcesses, ...(ctx.crashPoint ? { crashPoint: ctx.crashPoint } : {}) });
  }
  const executor = registry;
  capacity = () => executor.globalCapacity();
  const interrupted = await registry.recover();
  if (interrupted > 0) ctx.logger.info({ interrupted }, 'background tasks interrupted by the last stop');
  ctx.catalog.register(taskToolSource(registry));
  shared?.start();
  const endpoint = ctx.config.env.OTEL_EXPORTER_OTLP_METRICS_ENDPOINT;
  let pusher: OtlpPusher | undefined;
  if (endpoint) {
    const interval = Number(ctx.config.env.OTEL_METRIC_EXPORT_INTERVAL ?? 60_000);
    pusher = new OtlpPusher(metrics.registry, {
      endpoint,
      intervalMs: Number.isFinite(interval) && interval >= 100 ? interval : 60_000,
      headers: { ...parseOtlpHeaders(ctx.config.env.OTEL_EXPORTER_OTLP_HEADERS), ...parseOtlpHeaders(ctx.config.env.OTEL_EXPORTER_OTLP_METRICS_HEADERS) },
      logger: ctx.logger.child({ component: 'otlp' }),
      now: () => ctx.clock.now(),
    });
    pusher.start();
  }
  ctx.onClose(async () => {
    await registry.close();
    await pusher?.stop();
  });
  const single = registry instanceof TaskRegistry ? registry : undefined;
  return {
    registry,
    metrics,
    ...(shared ? { sweepHosts: (ids: string[], unowned: boolean) => (shared as SharedTaskRegistry).sweepHosts(ids, unowned) } : {}),
    ...(single ? { sweepWaiting: (parked: (runId: string) => Promise<boolean>) => single.sweepWaiting(parked), adoptParked: (runId: string) => single.adoptParked(runId) } : {}),
    ...(shared ? { adoptParked: (runId: string) => (shared as SharedTaskRegistry).adoptParked(runId) } : {}),
  };
}

