import { FengYuError, type PermissionMode } from '@fengyu/protocol';
import type { DomainRegistrar } from '../context';
import { typedRoutes } from '../http/route-types';
import { waitRequest } from './task.tools';
import type { TaskPriority, TaskState, TaskSubmitter } from './task-submitter';

/**
 * The background tasks domain's HTTP surface: the task routes and the scheduler's metrics at
 * `GET /metrics`. Other domains submit through `ctx.tasks` (or `app.tasks`).
 */

declare module 'fastify' {
  interface FastifyInstance {
    /** The task executor, for domains registered after it (schedules, webhooks). */
    tasks?: TaskSubmitter;
  }
}

const STATES: readonly TaskState[] = ['queued', 'running', 'waiting', 'completed', 'failed', 'cancelled', 'interrupted'];

const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string', minLength: 1, maxLength: 200 } } } as const;

export const registerTasks: DomainRegistrar = async (ctx, app) => {
  if (!ctx.tasksDomain) throw new Error('the tasks domain is not assembled');
  const { registry, metrics } = ctx.tasksDomain;
  app.decorate('tasks', registry);
  const api = typedRoutes(app);
  const tags = ['tasks'];

  api.post(
    '/api/agent/tasks',
    {
      schema: {
        summary: 'Submit a published workflow as a background task (202; 429 + Retry-After when capacity is exhausted)',
        tags,
        body: {
          type: 'object',
          required: ['workflowId'],
          additionalProperties: false,
          properties: { workflowId: { type: 'string', minLength: 1 }, inputs: { type: 'object' }, files: { type: 'array', maxItems: 64, items: { type: 'object' } }, priority: { type: 'string' }, permissionMode: { type: 'string' } },
        } as const,
      },
    },
    async (req, reply) => {
      const b = req.body;
      const result = await registry.submit({
        ownerId: req.owner,
        workflowId: b.workflowId,
        inputs: b.inputs,
        ...(b.files !== undefined ? { files: b.files } : {}),
        priority: (b.priority ?? 'normal') as TaskPriority,
        kind: 'workflow',
        ...(b.permissionMode !== undefined ? { permissionMode: b.permissionMode as PermissionMode } : {}),
      });
      if (!result.ok) throw new FengYuError('capacity_exhausted', { scope: result.refusal.capacityScope, retryAfterSeconds: result.refusal.retryAfterSeconds }, result.refusal);
      return reply.code(202).send(result.task);
    },
  );

  api.get(
    '/api/agent/tasks',
    {
      schema: {
        summary: 'Your background tasks, newest first ({items, nextCursor?})',
        tags,
        querystring: { type: 'object', properties: { state: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 200 }, cursor: { type: 'string' } } } as const,
      },
    },
    async (req) => {
      const q = req.query;
      if (q.state !== undefined && !STATES.includes(q.state as TaskState)) throw new FengYuError('task_field_invalid', { field: 'state', allowed: STATES.join(', ') });
      return registry.list(req.owner, { state: q.state as TaskState | undefined, limit: q.limit ?? 50, cursor: q.cursor });
    },
  );

  api.get('/api/agent/tasks/capacity', { schema: { summary: 'Queue pressure, limits and reservations, plus your own share', tags } }, async (req) => registry.capacity(req.owner));

  api.post(
    '/api/agent/tasks/wait',
    {
      schema: {
        summary: 'Wait for any or all of 1..20 tasks ({tasks, timedOut})',
        tags,
        body: {
          type: 'object',
          required: ['ids'],
          additionalProperties: false,
          properties: { ids: { type: 'array', minItems: 1, maxItems: 20, items: { type: 'string' } }, mode: { type: 'string', enum: ['any', 'all'] }, timeoutMs: { type: 'integer', minimum: 0, maximum: 60000 } },
        } as const,
      },
    },
    async (req) => {
      const b = req.body;
      const w = waitRequest(b.ids, b.mode);
      return registry.wait(req.owner, w.ids, w.mode, b.timeoutMs ?? 30_000);
    },
  );

  api.get('/api/agent/tasks/:id', { schema: { summary: 'One task (404 for an unknown id or another owner’s task)', tags, params: idParams } }, async (req) => {
    const t = await registry.get(req.owner, req.params.id);
    if (!t) throw new FengYuError('task_not_found', { id: req.params.id });
    return t;
  });

  api.get(
    '/api/agent/tasks/:id/output',
    {
      schema: {
        summary: 'Blocks up to timeoutMs (≤ 60000) for the task to finish, then returns its snapshot',
        tags,
        params: idParams,
        querystring: { type: 'object', properties: { timeoutMs: { type: 'integer', minimum: 0, maximum: 60000 } } } as const,
      },
    },
    async (req) => registry.output(req.owner, req.params.id, req.query.timeoutMs ?? 30_000),
  );

  api.post('/api/agent/tasks/:id/kill', { schema: { summary: 'Kill a task (queued: cancelled before it starts; running: cancel, SIGTERM, SIGKILL)', tags, params: idParams } }, async (req) =>
    registry.kill(req.owner, req.params.id),
  );

  api.get('/metrics', { config: { bearerAuth: true }, schema: { summary: 'Prometheus metrics: the background-task scheduler and the process', tags: ['host'] } }, async (_req, reply) => {
    const text = await metrics.text();
    return reply.header('content-type', metrics.contentType).send(text);
  });
};
