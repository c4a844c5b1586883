import { pickLocale } from '@fengyu/protocol';
import type { DomainRegistrar } from '../context';
import { typedRoutes } from '../http/route-types';
import { listOptions } from './input-options';
import { contentOf } from './workflow.repository';
import type { WorkflowsDomain } from './workflows.domain';

/** @deprecated import it from `workflows.domain.ts` (kept for the domains that read `app.workflows`). */
export type { WorkflowsDomain } from './workflows.domain';
import { createBody, fieldParams, idParams, publishBody, restoreBody, runBody, runIdReply, updateBody, versionParams } from './workflows.schemas';

/**
 * The workflows domain: definitions, revisions, publication, runs, run-time pickers,
 * templates, and the `run_workflow_<id>` tools of published workflows.
 */

declare module 'fastify' {
  interface FastifyInstance {
    /** @deprecated use `ctx.workflows` (the composition root passes it to every domain). */
    workflows?: WorkflowsDomain;
  }
}

type Body = Record<string, unknown>;

export const registerWorkflows: DomainRegistrar = (ctx, app) => {
  const domain = ctx.workflows;
  const { service, templates, base, runner } = domain;
  app.decorate('workflows', domain);
  const api = typedRoutes(app);
  const tags = ['workflows'];

  api.get('/api/workflows', { schema: { summary: 'List workflow definitions', tags } }, async (req) => ({ workflows: await service.list(req.owner) }));

  api.post('/api/workflows', { schema: { summary: 'Create a workflow (or create one from a template with {templateId})', tags, body: createBody } }, async (req) =>
    service.create(req.owner, req.body, pickLocale(req.headers['accept-language'])),
  );

  api.get('/api/workflows/:id', { schema: { summary: 'A workflow definition (graph rebuilt when none was saved)', tags, params: idParams } }, async (req) =>
    service.get(req.owner, req.params.id),
  );

  api.put('/api/workflows/:id', { schema: { summary: 'Save the draft (carries the revision it was based on; 409 when stale)', tags, params: idParams, body: updateBody } }, async (req) => {
    const current = contentOf(await service.row(req.owner, req.params.id));
    const { revision, ...changes } = req.body;
    const merged: Body = { ...current, graph: current.graph ?? undefined, layout: current.layout ?? undefined, ...changes };
    if ('plan' in changes && !('graph' in changes)) merged.graph = undefined;
    if (merged.graph === null) merged.graph = undefined;
    return service.update(req.owner, req.params.id, merged, revision);
  });

  api.delete('/api/workflows/:id', { schema: { summary: 'Delete a workflow, its versions (and its schedules and webhooks)', tags, params: idParams } }, async (req) => {
    await service.delete(req.owner, req.params.id);
    return { id: req.params.id, deleted: true };
  });

  api.post('/api/workflows/:id/publish', { schema: { summary: 'Publish the draft as a new immutable version', tags, params: idParams, body: publishBody } }, async (req) =>
    service.publish(req.owner, req.params.id, req.body.revision),
  );

  api.get('/api/workflows/:id/versions', { schema: { summary: 'Published versions, newest first', tags, params: idParams } }, async (req) => ({
    versions: await service.versions(req.owner, req.params.id),
  }));

  api.get('/api/workflows/:id/versions/:version', { schema: { summary: 'One published version’s content', tags, params: versionParams } }, async (req) => {
    const { id, version } = req.params;
    const v = await service.versionRow(req.owner, id, version);
    return { version: v.version, revision: v.revision, publishedAt: v.published_at, ...contentOf(v) };
  });

  api.post('/api/workflows/:id/restore', { schema: { summary: 'Copy a version into a new draft (the active version is unchanged)', tags, params: idParams, body: restoreBody } }, async (req) => {
    return service.restore(req.owner, req.params.id, req.body.version, req.body.revision);
  });

  api.post('/api/workflows/:id/duplicate', { schema: { summary: 'Save a copy (a new draft)', tags, params: idParams } }, async (req) => service.duplicate(req.owner, req.params.id));

  api.post('/api/workflows/:id/run', { schema: { summary: 'Run the workflow (inputs are bound and checked first)', tags, params: idParams, body: runBody, response: runIdReply } }, async (req) => {
    const b = req.body;
    const runId = await runner.run(req.owner, req.params.id, { ...b, config: { planApproval: false, ...(b.config ?? {}) }, origin: 'workflow' });
    return { runId };
  });

  api.get('/api/workflows/:id/inputs/:field/options', { schema: { summary: 'Options of an "x-fengyu-enum" input, from its list tool', tags, params: fieldParams } }, async (req) => {
    const { id, field } = req.params;
    const row = await service.row(req.owner, id);
    const options = await listOptions({ owner: req.owner, schema: contentOf(row).inputSchema, workflowId: id, field, catalog: await base.snapshot(req.owner), guard: ctx.guard });
    return { options };
  });

  api.get('/api/workflow-templates', { schema: { summary: 'The template gallery (with the tools each template misses here)', tags } }, async (req) => {
    const catalog = await base.snapshot(req.owner);
    return {
      templates: templates.list().map((t) => ({ ...t, missingTools: [...new Set(t.plan.steps.flatMap((s) => (s.tool && !catalog.get(s.tool) ? [s.tool] : [])))] })),
    };
  });
};
