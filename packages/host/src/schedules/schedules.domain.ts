import type { InputVault } from '../agent/secret-inputs';
import type { Logger } from 'pino';
import type { CrashPoint } from '../config/crash-points';
import type { Clock, SandboxPosture } from '../context';
import type { PermissionGuard } from '../permissions/types';
import type { Db } from '../storage/database';
import type { TaskSubmitter } from '../tasks/task-submitter';
import type { CatalogSnapshot, ToolCatalog } from '../tools/catalog';
import type { WorkflowService } from '../workflows/workflow.service';
import { ScheduleRepository } from './schedule.repository';
import { FileService } from '../files/file.service';
import { type KeptFileStore, ScheduleService } from './schedule.service';
import { ScheduleLoop } from './schedule-loop';
import { registerScheduleErrors } from './schedules.errors';
import { scheduleToolSource } from './schedules.tools';

/**
 * The schedules domain's services: the repository, the fire loop, the service behind the routes
 * and the `task_schedule` tool, and the workflow-deletion cascade (the workflow's schedules are
 * disabled inside the delete transaction). The loop is started by `start()` once the host is
 * assembled (task executor ready, orphaned runs recovered), and stopped by `stop()`.
 */

export interface SchedulesDeps {
  db: Db;
  clock: Clock;
  logger: Logger;
  catalog: ToolCatalog;
  env: Readonly<Record<string, string | undefined>>;
  workflows: { service: WorkflowService; base: { snapshot(owner: string): Promise<CatalogSnapshot> } };
  /** The background-task executor, read at fire time. */
  tasks: () => TaskSubmitter | undefined;
  guard: () => PermissionGuard;
  posture: () => SandboxPosture;
  /** Crash tests (docs/reliability.md): the host's crash points. */
  crashPoint?: CrashPoint;
  /** `$FENGYU_HOME`: where a schedule's kept copies of uploads live (without it, no files). */
  home?: string;
  /** Keeps a schedule's secret input values (docs/secrets.md); without it none is kept (its runs see the marker). */
  vault?: InputVault;
}

function keptFileStore(files: FileService): KeptFileStore {
  return { repo: files.repo, keep: (owner, id) => files.keep(owner, id), release: (owner, id) => files.release(owner, id) };
}

export interface SchedulesDomain {
  service: ScheduleService;
  loop: ScheduleLoop;
  repo: ScheduleRepository;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** The host's zone: the default of calendar schedules that name none. */
export function hostTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

export function createSchedulesDomain(deps: SchedulesDeps): SchedulesDomain {
  registerScheduleErrors();
  const repo = new ScheduleRepository(deps.db);
  const crashPoint = deps.crashPoint;
  const loop = new ScheduleLoop({
    repo,
    submitter: deps.tasks,
    clock: deps.clock,
    posture: deps.posture,
    logger: deps.logger.child({ component: 'schedules' }),
    ...(crashPoint ? { crashPoint } : {}),
  });
  const service = new ScheduleService({
    repo,
    loop,
    clock: deps.clock,
    posture: deps.posture,
    workflows: deps.workflows.service,
    baseCatalog: (owner) => deps.workflows.base.snapshot(owner),
    guard: deps.guard,
    hostZone: hostTimeZone(),
    ...(deps.vault ? { vault: deps.vault } : {}),
    ...(deps.home ? { files: keptFileStore(new FileService(deps.db, deps.home, deps.clock)) } : {}),
  });
  deps.workflows.service.onDelete(async (trx, owner, workflowId) => {
    const at = deps.clock.now();
    await repo.disableForWorkflow(trx, owner, workflowId, { code: 'schedule_workflow_deleted', params: {}, at: new Date(at).toISOString() }, at);
  });
  deps.catalog.register(scheduleToolSource(service));
  return { service, loop, repo, start: () => loop.start(), stop: () => loop.stop() };
}
