import { type AgentPlan, type FailedStep, FengYuError, isTerminal, pickLocale, RUN_STATUSES, type RunDetail, type RunListItem, type RunStatus, type StepExecution } from '@fengyu/protocol';
import type { FastifyInstance } from 'fastify';
import type { HostContext } from '../context';
import { typedRoutes } from '../http/route-types';
import { streamRun } from '../events/sse';
import type { CurrentPlan, RetryPreview } from './agent.service';
import { batchBody, listQuery, retryBody, rewindBody, runIdParams, runIdReply, startBody, streamQuery } from './agent.schemas';
import { redactPlan } from './run-text';
import { classifyApproveBody } from './approve-body';
import { rewindPreview } from './rewind-effects';
import { parsePlan, type RunRepository, type RunRow } from './run.repository';
import { registerRunOutputRoute } from './run-output.routes';
import { errorWorkflowStart } from '../workflows/error-dispatch';

/** HTTP surface of the agent. */

function encodeCursor(row: RunRow): string {
  return Buffer.from(`${row.created_at}|${row.id}`).toString('base64url');
}

/** The statuses of a list filter (comma-separated); an unknown one is refused, naming it. */
function statusFilter(text: string | undefined): RunStatus[] | undefined {
  const statuses = (text ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
  if (statuses.length === 0) return undefined;
  for (const status of statuses) {
    if (!(RUN_STATUSES as readonly string[]).includes(status)) throw new FengYuError('invalid_run_status', { status, allowed: RUN_STATUSES.join(', ') });
  }
  return statuses as RunStatus[];
}

function decodeCursor(c: string | undefined): { createdAt: string; id: string } | undefined {
  if (!c) return undefined;
  const [createdAt, id] = Buffer.from(c, 'base64url').toString('utf8').split('|');
  if (!createdAt || !id) throw new FengYuError('invalid_request', { reason: 'cursor is malformed' });
  return { createdAt, id };
}

function summaryOf(row: RunRow): RunListItem {
  const plan = parsePlan(row);
  return {
    id: row.id,
    goal: row.goal,
    status: row.status,
    summary: row.summary,
    error: row.error,
    origin: row.origin,
    parentRunId: row.parent_run_id,
    workflowId: row.workflow_id,
    workflowVersion: row.workflow_version,
    stepCount: plan?.steps.length ?? 0,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    finishedAt: row.finished_at,
  };
}

/** Executions of body steps name their forEach step (`parentStepId`), found in the plan. */
function withParents(executions: StepExecution[], plan: AgentPlan | undefined): StepExecution[] {
  const parent = new Map((plan?.steps ?? []).flatMap((s) => (s.steps ?? []).map((b) => [b.id, s.id] as const)));
  return executions.map((e) => (e.iteration === undefined ? e : { ...e, parentStepId: parent.get(e.stepId) }));
}

export async function runDetail(ctx: HostContext, repo: RunRepository, row: RunRow): Promise<RunDetail> {
  const [executions, events, catalog, errorWorkflow] = await Promise.all([
    repo.steps(row.id),
    ctx.events.read(row.id),
    ctx.catalog.snapshot(row.owner),
    row.workflow_id ? errorWorkflowStart(ctx.errorWorkflows, ctx.tasks, row) : undefined,
  ]);
  const plan = parsePlan(row);
  const config = JSON.parse(row.config) as Record<string, unknown>;
  // a completed run's failures that onError went past: as its `complete` event recorded them
  const ended = row.status === 'completed' ? events.findLast((e) => e.type === 'complete') : undefined;
  const failedSteps = (ended as { failedSteps?: FailedStep[] } | undefined)?.failedSteps;
  return {
    ...summaryOf(row),
    plan: plan ? redactPlan(plan, catalog) : null,
    config: {
      permissionMode: config.permissionMode,
      planApproval: config.planApproval,
      stepApproval: config.stepApproval,
      capabilityMode: config.readOnly ? 'read-only' : undefined,
      backend: config.backend,
      model: config.model,
    },
    inputs: JSON.parse(row.inputs),
    result: row.result ? JSON.parse(row.result) : null,
    gate: row.gate ? JSON.parse(row.gate) : null,
    sandbox: JSON.parse(row.sandbox),
    executions: withParents(executions, plan),
    ...(failedSteps ? { failedSteps } : {}),
    events: events.filter((e) => e.type !== 'plan_token'),
    ...(errorWorkflow ? { errorWorkflow } : {}),
  };
}

export function registerAgentRoutes(ctx: HostContext, app: FastifyInstance, repo: RunRepository): void {
  const agent = ctx.agent;
  const api = typedRoutes(app);
  const tags = ['agent'];
  registerRunOutputRoute(ctx, app, repo);

  api.post('/api/agent/run', { schema: { summary: 'Start a run (plan from goal, or a supplied workflow)', tags, body: startBody, response: runIdReply } }, async (req) => {
    const b = req.body;
    const runId = await agent.start({ owner: req.owner, goal: b.goal, workflow: b.workflow, config: b.config, inputs: b.inputs, files: b.files, origin: 'api' });
    return { runId };
  });

  api.get('/api/agent/stream', { schema: { summary: 'SSE stream of a run (replay, then live)', tags, querystring: streamQuery } }, async (req, reply) => {
    const q = req.query;
    // a run created here recently has its owner in memory; any other is read from the database
    if ((agent.ownerOf(q.runId) ?? (await repo.ownerOf(q.runId))) !== req.owner) throw new FengYuError('run_not_found', { runId: q.runId });
    const header = Number(req.headers['last-event-id']);
    const after = Number.isFinite(header) && header > 0 ? header : (q.lastEventId ?? 0);
    await streamRun(ctx.events, q.runId, after, req, reply, ctx.config.sseHeartbeatMs);
  });

  api.post('/api/agent/:runId/approve', { schema: { summary: 'Release the pending plan or step gate (optional edited AgentPlan body)', tags, params: runIdParams } }, async (req) => {
    const { runId } = req.params;
    classifyApproveBody(req.body);
    const gate = await agent.approve(req.owner, runId, req.body);
    return { runId, approved: gate };
  });

  api.post('/api/agent/:runId/input', { schema: { summary: 'Answer the pending input step with {values} (400 lists every field that does not fit the form; 409 when no input is pending)', tags, params: runIdParams } }, async (req) => {
    const { runId } = req.params;
    return { runId, answered: await agent.input(req.owner, runId, req.body) };
  });

  api.post('/api/agent/:runId/cancel', { schema: { summary: 'Cancel a run (cooperative)', tags, params: runIdParams } }, async (req) => {
    const { runId } = req.params;
    return { runId, ...(await agent.cancel(req.owner, runId)) };
  });

  registerHistoryRoutes(ctx, app, repo);
  registerRetryRoutes(ctx, app);
}

/** History: list, detail, resume, fork, rewind, batch, and the tool catalog. */
function registerHistoryRoutes(ctx: HostContext, app: FastifyInstance, repo: RunRepository): void {
  const agent = ctx.agent;
  const api = typedRoutes(app);
  const tags = ['agent'];

  api.get('/api/agent/runs', { schema: { summary: 'Run history, newest first (optionally one workflow\'s runs)', tags, querystring: listQuery } }, async (req) => {
    const q = req.query;
    const limit = q.limit ?? 50;
    const rows = await repo.list({ owner: req.owner, q: q.q?.trim() || undefined, status: statusFilter(q.status), workflowId: q.workflowId, limit: limit + 1, cursor: decodeCursor(q.cursor) });
    const page = rows.slice(0, limit);
    return { runs: page.map(summaryOf), nextCursor: rows.length > limit ? encodeCursor(page[page.length - 1] as RunRow) : null };
  });

  api.get('/api/agent/runs/:runId', { schema: { summary: 'A run: plan, executions, audit events', tags, params: runIdParams } }, async (req) => {
    const { runId } = req.params;
    const row = await repo.get(runId);
    if (!row || row.owner !== req.owner) throw new FengYuError('run_not_found', { runId });
    return runDetail(ctx, repo, row);
  });

  api.post('/api/agent/runs/:runId/resume', { schema: { summary: 'Resume a failed, cancelled or interrupted run (plan review first)', tags, params: runIdParams, response: runIdReply } }, async (req) => {
    const { runId } = req.params;
    return { runId: await agent.resume(req.owner, runId) };
  });

  api.post('/api/agent/runs/:runId/fork', { schema: { summary: 'Copy a finished run’s plan into a new run (plan review first)', tags, params: runIdParams, response: runIdReply } }, async (req) => {
    const { runId } = req.params;
    return { runId: await agent.fork(req.owner, runId) };
  });

  api.post('/api/agent/runs/:runId/rewind', { schema: { summary: 'A new run with the first keepSteps steps and their completed executions', tags, params: runIdParams, body: rewindBody, response: runIdReply } }, async (req) => {
    const { runId } = req.params;
    return { runId: await agent.rewind(req.owner, runId, req.body.keepSteps) };
  });

  // the rewind's checks, writing nothing: which steps it keeps and drops, and which dropped ones already took effect
  api.post('/api/agent/runs/:runId/rewind/preview', { schema: { summary: 'What a rewind to keepSteps keeps and drops, and which dropped steps already wrote or sent something', tags, params: runIdParams, body: rewindBody } }, async (req) => {
    const { runId } = req.params;
    const row = await repo.get(runId);
    if (!row || row.owner !== req.owner) throw new FengYuError('run_not_found', { runId });
    const plan = parsePlan(row);
    if (!isTerminal(row.status) || !plan) throw new FengYuError('run_not_finished', { runId, status: plan ? row.status : `${row.status} (it has no plan)` });
    const keep = req.body.keepSteps;
    if (!Number.isInteger(keep) || keep < 1 || keep > plan.steps.length) throw new FengYuError('invalid_keep_steps', { max: plan.steps.length });
    const catalog = await ctx.catalog.snapshot(req.owner);
    return rewindPreview(plan, keep, await repo.steps(runId), (tool) => catalog.get(tool)?.effect);
  });

  api.post('/api/agent/batch', { schema: { summary: 'Start 1–8 isolated runs', tags, body: batchBody } }, async (req) => {
    const b = req.body;
    return { runIds: await agent.batch(req.owner, b.runs, b.capabilityMode) };
  });

  api.get('/api/agent/tools', { schema: { summary: 'The orchestrable tool catalog', tags, querystring: { type: 'object', properties: { include: { type: 'string', enum: ['status'] } } } as const } }, async (req) => {
    const snapshot = await ctx.catalog.snapshot(req.owner);
    const tools = snapshot.entries(pickLocale(req.headers['accept-language']));
    if (req.query.include === 'status') return { tools, sources: await ctx.catalog.status() };
    return tools;
  });
}

/** Retry from the failed step, and its preview. */
function registerRetryRoutes(ctx: HostContext, app: FastifyInstance): void {
  const agent = ctx.agent;
  const api = typedRoutes(app);
  const tags = ['agent'];
  const current: CurrentPlan = async (owner, workflowId) => {
    const service = ctx.workflows.service;
    const row = await service.row(owner, workflowId).catch(() => undefined);
    if (!row || row.published_version === null) return undefined;
    const v = await service.versionRow(owner, workflowId, row.published_version);
    return { plan: JSON.parse(v.plan) as AgentPlan, version: v.version };
  };

  api.post('/api/agent/runs/:runId/retry', { schema: { summary: 'Retry a failed or interrupted run from its failed step (a new run, started at once)', tags, params: runIdParams, body: retryBody, response: runIdReply } }, async (req) => {
    return { runId: await agent.retry(req.owner, req.params.runId, req.body?.version, current) };
  });

  api.post('/api/agent/runs/:runId/retry/preview', { schema: { summary: 'Which steps a retry would reuse and which it would run again', tags, params: runIdParams, body: retryBody } }, async (req): Promise<RetryPreview> => {
    const { version, workflowVersion, reused, rerun } = await agent.retryPlan(req.owner, req.params.runId, req.body?.version, current);
    return { version, ...(workflowVersion !== undefined ? { workflowVersion } : {}), reused, rerun };
  });
}
