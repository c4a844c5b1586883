import { pickLocale } from '@fengyu/protocol';
import type { FastifyRequest } from 'fastify';
import type { DomainRegistrar, HostContext } from '../context';
import type { TaskSubmitter } from '../tasks/task-submitter';
import type { WorkflowsDomain } from '../workflows/workflows.routes';
import { ScheduleRepository } from './schedule.repository';
import { ScheduleService, toView } from './schedule.service';
import { type CrashPoint, ScheduleLoop } from './schedule-loop';
import { registerScheduleErrors } from './schedules.errors';
import { createBody, idParams, listQuery, previewBody } from './schedules.schemas';
import { ScheduleToolSource } from './schedules.tools';

/**
 * The schedules domain: `POST/GET /api/agent/schedules`, `GET/DELETE /api/agent/schedules/{id}`,
 * `POST /api/agent/schedules/preview`, the `task_schedule` tool, the fire loop, and the
 * workflow-deletion cascade (the workflow's schedules are disabled in the delete transaction).
 */

declare module 'fastify' {
  interface FastifyInstance {
    /** The schedules domain (tests and the UI's later pages read it). */
    schedules?: SchedulesDomain;
  }
}

export interface SchedulesDomain {
  service: ScheduleService;
  loop: ScheduleLoop;
  repo: ScheduleRepository;
}

/** The host's zone: the default of calendar schedules that name none. */
export function hostTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/**
 * Test-only: `FENGYU_TEST_SCHEDULE_CRASH=<point>` kills the host (SIGKILL, no cleanup) at that
 * labelled point of the first fire, so restart tests can check the at-most-once claim.
 */
function crashHook(env: Readonly<Record<string, string | undefined>>): ((point: CrashPoint) => void) | undefined {
  const wanted = env.FENGYU_TEST_SCHEDULE_CRASH;
  if (!wanted) return undefined;
  return (point) => {
    if (point === wanted) process.kill(process.pid, 'SIGKILL');
  };
}

export function createSchedulesDomain(ctx: HostContext, workflows: WorkflowsDomain): SchedulesDomain {
  registerScheduleErrors();
  const repo = new ScheduleRepository(ctx.db);
  const crashPoint = crashHook(ctx.config.env);
  const loop = new ScheduleLoop({
    repo,
    submitter: () => (ctx as HostContext & { tasks?: TaskSubmitter }).tasks,
    clock: ctx.clock,
    posture: () => ctx.posture(),
    logger: ctx.logger.child({ component: 'schedules' }),
    ...(crashPoint ? { crashPoint } : {}),
  });
  const service = new ScheduleService({
    repo,
    loop,
    clock: ctx.clock,
    posture: () => ctx.posture(),
    workflows: workflows.service,
    baseCatalog: (owner) => workflows.base.snapshot(owner),
    guard: () => ctx.guard,
    hostZone: hostTimeZone(),
  });
  workflows.service.onDelete(async (trx, owner, workflowId) => {
    const at = ctx.clock.now();
    await repo.disableForWorkflow(trx, owner, workflowId, { code: 'schedule_workflow_deleted', params: {}, at: new Date(at).toISOString() }, at);
  });
  ctx.catalog.register(new ScheduleToolSource(service));
  return { service, loop, repo };
}

export const registerSchedules: DomainRegistrar = async (ctx, app) => {
  if (!app.workflows) throw new Error('the schedules domain needs the workflows domain');
  const domain = createSchedulesDomain(ctx, app.workflows);
  const { service, loop } = domain;
  app.decorate('schedules', domain);
  const tags = ['schedules'];
  const locale = (req: FastifyRequest) => pickLocale(req.headers['accept-language']);

  app.post('/api/agent/schedules', { schema: { summary: 'Create a schedule of a published workflow (201 + the schedule)', tags, body: createBody } }, async (req, reply) => {
    const row = await service.create(req.owner, req.body ?? {});
    return reply.status(201).send(toView(row, locale(req)));
  });

  app.get('/api/agent/schedules', { schema: { summary: 'Your schedules, newest first ({items, nextCursor?})', tags, querystring: listQuery } }, async (req) => {
    const q = req.query as { limit?: number; cursor?: string };
    const page = await service.list(req.owner, q.limit, q.cursor);
    return { items: page.items.map((r) => toView(r, locale(req))), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  });

  app.post('/api/agent/schedules/preview', { schema: { summary: 'The next fire instants of a recurrence ({times})', tags, body: previewBody } }, async (req) => ({
    times: service.preview(req.body ?? {}),
  }));

  app.get('/api/agent/schedules/:id', { schema: { summary: 'One schedule', tags, params: idParams } }, async (req) => toView(await service.get(req.owner, (req.params as { id: string }).id), locale(req)));

  app.delete('/api/agent/schedules/:id', { schema: { summary: 'Delete a schedule (future fires stop; submitted runs continue)', tags, params: idParams } }, async (req) => {
    const id = (req.params as { id: string }).id;
    await service.delete(req.owner, id);
    return { id, deleted: true };
  });

  await loop.start();
  ctx.onClose(() => loop.stop());
};
