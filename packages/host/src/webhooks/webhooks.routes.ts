import { FengYuError, PERMISSION_MODES } from '@fengyu/protocol';
import type { FastifyInstance } from 'fastify';
import type { DomainRegistrar, HostContext } from '../context';
import { isLoopbackHost } from '../http/auth';
import type { Db } from '../storage/database';
import { sendError } from '../http/errors';
import { rawHeaderValues } from '../http/request-path';
import { typedRoutes } from '../http/route-types';
import type { TaskSubmitter } from '../tasks/task-submitter';
import { assertUnattendedRunnable } from '../workflows/unattended-check';
import { PublishedVersions } from '../workflows/published-versions';
import { contentOf } from '../workflows/workflow.repository';
import type { WorkflowsDomain } from '../workflows/workflows.routes';
import { type TriggerRow, WebhookRepository } from './webhook.repository';
import { type ActiveWorkflow, type UnattendedCheck, type WebhookWorkflows, WebhookService } from './webhook.service';
import { checkEventId, deliveryBinder, isLoopbackPeer, MAX_BODY_BYTES } from './webhook-rules';
import { registerWebhookErrors } from './webhooks.errors';

declare module 'fastify' {
  interface FastifyRequest {
    /** A delivery's authenticated trigger (set by its route's `onRequest`; null on other requests). */
    webhookTrigger: TriggerRow | null;
    /** A delivery's checked event id, if it sent one. */
    webhookEventId: string | undefined;
  }
}

/**
 * The webhooks domain: triggers under `/api/workflows/{id}/webhooks` (host token, owner-scoped)
 * and deliveries at `/api/workflow-hooks/{triggerId}` (no host token: the trigger's secret
 * authenticates; loopback peer and Host only; 256 KiB body limit enforced while reading).
 */

const tags = ['webhooks'];
const idParams = { type: 'object', required: ['id'], properties: { id: { type: 'string' } } } as const;
const triggerParams = { type: 'object', required: ['id', 'triggerId'], properties: { id: { type: 'string' }, triggerId: { type: 'string' } } } as const;
const createBody = {
  type: 'object',
  required: ['permissionMode'],
  additionalProperties: false,
  properties: {
    defaults: { type: 'object', description: 'Inputs used when a delivery does not send them' },
    permissionMode: { type: 'string', enum: PERMISSION_MODES, description: 'The permission mode of every run the trigger starts' },
    name: { type: 'string', maxLength: 100 },
  },
} as const;
const pageQuery = { type: 'object', properties: { limit: { type: 'integer', minimum: 1, maximum: 100 }, cursor: { type: 'string', maxLength: 100 } } } as const;

/**
 * The active published version of a workflow, through the workflows domain. Versions are
 * immutable, so their schemas are cached; which version is active is kept per workflow on the
 * host's own SQLite file until the workflows service reports a publish or deletion, and read per
 * delivery on a shared database.
 */
export function webhookWorkflows(domain: WorkflowsDomain, db: Db): WebhookWorkflows {
  const schemas = new Map<string, ActiveWorkflow>();
  const versions = new PublishedVersions(domain.service, db);
  return {
    async exists(owner, workflowId) {
      await domain.service.row(owner, workflowId);
    },
    async active(owner, workflowId) {
      const row = { published_version: versions.peek(owner, workflowId) ?? (await versions.get(owner, workflowId)) };
      if (row.published_version === null) throw new FengYuError('workflow_not_published', { id: workflowId });
      const key = `${workflowId}@${row.published_version}`;
      let hit = schemas.get(key);
      if (!hit) {
        const v = await domain.service.versionRow(owner, workflowId, row.published_version);
        const inputSchema = contentOf(v).inputSchema;
        hit = { version: v.version, inputSchema, binder: deliveryBinder(inputSchema) };
        if (schemas.size > 500) schemas.clear();
        schemas.set(key, hit);
      }
      return hit;
    },
  };
}

/** Where the background-task executor is exposed to domains. */
function taskSubmitter(ctx: HostContext, app: FastifyInstance): TaskSubmitter | undefined {
  return (ctx as HostContext & { tasks?: TaskSubmitter }).tasks ?? (app as FastifyInstance & { tasks?: TaskSubmitter }).tasks;
}

/** Under `ask`, a trigger is refused when its workflow's active version has a step that would wait for an approval. */
function unattendedCheck(ctx: HostContext, domain: WorkflowsDomain): UnattendedCheck {
  return async ({ owner, workflowId, permissionMode }) => {
    if (permissionMode !== 'ask') return;
    const row = await domain.service.row(owner, workflowId);
    if (row.published_version === null) throw new FengYuError('workflow_not_published', { id: workflowId });
    const version = await domain.service.versionRow(owner, workflowId, row.published_version);
    const tools = (await domain.base.snapshot(owner)).tools;
    await assertUnattendedRunnable({ owner, plan: contentOf(version).plan, permissionMode, tools, guard: ctx.guard }, 'trigger_needs_unattended_mode');
  };
}

export function registerWebhookRoutes(ctx: HostContext, app: FastifyInstance, tasks: TaskSubmitter): WebhookService {
  registerWebhookErrors();
  const domain = app.workflows;
  if (!domain) throw new Error('the webhooks domain needs the workflows domain');
  const service = new WebhookService({
    repo: new WebhookRepository(ctx.db),
    clock: ctx.clock,
    tasks,
    workflows: webhookWorkflows(domain, ctx.db),
    posture: () => ctx.posture(),
    logger: ctx.logger.child({ component: 'webhooks' }),
    unattended: unattendedCheck(ctx, domain),
    vault: ctx.vault,
    // crash tests (docs/reliability.md): `webhook-claim`, `webhook-commit`
    ...(ctx.crashPoint ? { crashPoint: ctx.crashPoint } : {}),
  });
  domain.service.onDelete((trx, owner, workflowId) => service.disableForWorkflow(trx, owner, workflowId));
  app.addHook('onReady', async () => {
    await service.start();
    await service.reconcile();
  });
  ctx.onClose(() => service.stop());

  const api = typedRoutes(app);

  api.post('/api/workflows/:id/webhooks', { schema: { summary: 'Create a webhook trigger on a published workflow (the secret is shown once)', tags, params: idParams, body: createBody } }, async (req, reply) => {
    const created = await service.create(req.owner, req.params.id, req.body);
    reply.code(201);
    return created;
  });

  api.get('/api/workflows/:id/webhooks', { schema: { summary: 'The workflow’s webhook triggers', tags, params: idParams } }, async (req) => service.list(req.owner, req.params.id));

  api.post('/api/workflows/:id/webhooks/:triggerId/rotate', { schema: { summary: 'Replace a trigger’s secret (the old one fails at once)', tags, params: triggerParams } }, async (req) => {
    const p = req.params;
    return service.rotate(req.owner, p.id, p.triggerId);
  });

  api.delete('/api/workflows/:id/webhooks/:triggerId', { schema: { summary: 'Delete a webhook trigger and its delivery audit', tags, params: triggerParams } }, async (req) => {
    const p = req.params;
    await service.remove(req.owner, p.id, p.triggerId);
    return { id: p.triggerId, deleted: true };
  });

  api.get('/api/workflows/:id/webhooks/:triggerId/deliveries', { schema: { summary: 'A trigger’s delivery audit, newest first (no bodies, secrets or event ids)', tags, params: triggerParams, querystring: pageQuery } }, async (req) => {
    const p = req.params;
    const q = req.query;
    return service.deliveries(req.owner, p.id, p.triggerId, q.limit ?? 50, q.cursor);
  });

  // Deliveries: a scope of their own for the body limit's error mapping.
  app.register(async (untyped) => {
    const scope = typedRoutes(untyped);
    scope.setErrorHandler((err, req, reply) => {
      const code = (err as { code?: string }).code;
      return sendError(code === 'FST_ERR_CTP_BODY_TOO_LARGE' ? new FengYuError('payload_too_large', { limit: MAX_BODY_BYTES }) : err, req, reply);
    });
    // the delivery's trigger and event id travel on the request (declared once: no per-request map or object)
    untyped.decorateRequest('webhookTrigger', null);
    untyped.decorateRequest('webhookEventId', undefined);
    scope.post(
      '/api/workflow-hooks/:triggerId',
      {
        bodyLimit: MAX_BODY_BYTES,
        config: { tokenExempt: 'webhook-secret' },
        schema: {
          summary: 'Deliver a webhook: starts the trigger’s workflow as a background task (no host token; the X-FengYu-Webhook-Secret header authenticates; loopback only)',
          tags,
          params: { type: 'object', required: ['triggerId'], properties: { triggerId: { type: 'string' } } } as const,
        },
        // Everything but the body is checked before the body is read.
        onRequest: async (req) => {
          const address = req.socket.remoteAddress;
          if (!isLoopbackPeer(address)) throw new FengYuError('webhook_peer_forbidden', { address: String(address ?? 'unknown') });
          if (!isLoopbackHost(req.headers.host)) throw new FengYuError('forbidden_host', { host: String(req.headers.host ?? '') });
          const length = Number(req.headers['content-length'] ?? 0);
          const trigger = await service.authenticate(req.params.triggerId, req.headers['x-fengyu-webhook-secret']);
          if (length > MAX_BODY_BYTES) throw new FengYuError('payload_too_large', { limit: MAX_BODY_BYTES });
          // Node joins a repeated header into one value: count what was sent
          const ids = rawHeaderValues(req.raw.rawHeaders, 'x-fengyu-event-id');
          const ev = checkEventId(ids.length > 1 ? ids : ids[0]);
          if (!ev.ok) throw new FengYuError('webhook_event_id_invalid', { reason: ev.reason });
          req.webhookTrigger = trigger;
          req.webhookEventId = ev.eventId;
        },
      },
      async (req, reply) => {
        const trigger = req.webhookTrigger;
        if (!trigger) throw new FengYuError('webhook_secret_invalid');
        const answer = await service.deliver(trigger, req.webhookEventId, req.body);
        reply.code(202);
        return answer;
      },
    );
  });
  return service;
}

export const registerWebhooks: DomainRegistrar = (ctx, app) => {
  const tasks = taskSubmitter(ctx, app);
  if (!tasks) {
    ctx.logger.warn('webhooks are off: no background-task executor is registered');
    return;
  }
  registerWebhookRoutes(ctx, app, tasks);
};
