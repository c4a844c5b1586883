import { pickLocale } from '@fengyu/protocol';
import type { FastifyRequest } from 'fastify';
import type { DomainRegistrar } from '../context';
import { typedRoutes } from '../http/route-types';
import type { TaskSubmitter } from '../tasks/task-submitter';
import type { ScheduleRow } from './schedule.repository';
import { toView } from './schedule.service';
import { downIntervals, type Downtime, firesWhileDown } from './downtime';
import { hostSpans } from '../storage/host-history';
import { createSchedulesDomain, type SchedulesDomain } from './schedules.domain';
import { createBody, idParams, listQuery, previewBody } from './schedules.schemas';

/**
 * Routes of the schedules domain: `POST/GET /api/agent/schedules`,
 * `GET/DELETE /api/agent/schedules/{id}`, `POST /api/agent/schedules/preview`.
 */

declare module 'fastify' {
  interface FastifyInstance {
    /** The schedules domain (tests read it). */
    schedules?: SchedulesDomain;
  }
}

const DOWNTIME_WINDOW_MS = 30 * 24 * 3600 * 1000;
const iso = (ms: number) => new Date(ms).toISOString();

export const registerSchedules: DomainRegistrar = async (ctx, app) => {
  if (!app.workflows) throw new Error('the schedules domain needs the workflows domain');
  const domain = createSchedulesDomain({
    db: ctx.db,
    clock: ctx.clock,
    logger: ctx.logger,
    catalog: ctx.catalog,
    env: ctx.config.env,
    home: ctx.config.home,
    vault: ctx.vault,
    workflows: app.workflows,
    // the tasks domain decorates the app with its executor (registered before this one)
    tasks: () => (app as unknown as { tasks?: TaskSubmitter }).tasks ?? (ctx as typeof ctx & { tasks?: TaskSubmitter }).tasks,
    guard: () => ctx.guard,
    posture: () => ctx.posture(),
    ...(ctx.crashPoint ? { crashPoint: ctx.crashPoint } : {}),
  });
  const { service } = domain;
  app.decorate('schedules', domain);
  const api = typedRoutes(app);
  const tags = ['schedules'];
  const locale = (req: FastifyRequest) => pickLocale(req.headers['accept-language']);
  // the schedule page says which fires fell while no host ran (the hosts' recorded spans, last 30 days)
  const downtimes = async () => downIntervals(await hostSpans(ctx.db, ctx.clock.now() - DOWNTIME_WINDOW_MS));
  const viewOf = (row: ScheduleRow, req: FastifyRequest, downs: Downtime[]) => {
    const view = toView(row, locale(req));
    const fires = firesWhileDown(view.recurrence, Number(row.anchor_ms), downs);
    return fires.length ? { ...view, firesWhileDown: fires.map((f) => ({ at: iso(f.at), downFrom: iso(f.downFrom), downUntil: iso(f.downUntil) })) } : view;
  };

  api.post('/api/agent/schedules', { schema: { summary: 'Create a schedule of a published workflow (201 + the schedule)', tags, body: createBody } }, async (req, reply) => {
    const row = await service.create(req.owner, req.body ?? {});
    return reply.status(201).send(toView(row, locale(req)));
  });

  api.get('/api/agent/schedules', { schema: { summary: 'Your schedules, newest first ({items, nextCursor?})', tags, querystring: listQuery } }, async (req) => {
    const page = await service.list(req.owner, req.query.limit, req.query.cursor);
    const downs = await downtimes();
    return { items: page.items.map((r) => viewOf(r, req, downs)), ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}) };
  });

  api.post('/api/agent/schedules/preview', { schema: { summary: 'The next fire instants of a recurrence ({times})', tags, body: previewBody } }, async (req) => ({
    times: service.preview(req.body ?? {}),
  }));

  api.get('/api/agent/schedules/:id', { schema: { summary: 'One schedule', tags, params: idParams } }, async (req) => viewOf(await service.get(req.owner, req.params.id), req, await downtimes()));

  api.delete('/api/agent/schedules/:id', { schema: { summary: 'Delete a schedule (future fires stop; submitted runs continue)', tags, params: idParams } }, async (req) => {
    const id = req.params.id;
    await service.delete(req.owner, id);
    return { id, deleted: true };
  });

  await domain.start();
  ctx.onClose(() => domain.stop());
};
