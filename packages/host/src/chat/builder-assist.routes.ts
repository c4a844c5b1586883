import { randomUUID } from 'node:crypto';
import { canonicalJson, checkGraph, errorSpecOf, FengYuError, graphToPlan, isStepNode, parseGraph, pickLocale, registerErrors } from '@fengyu/protocol';
import type { FastifyInstance } from 'fastify';
import type { DomainRegistrar, HostContext } from '../context';
import { type FromSchema, typedRoutes } from '../http/route-types';
import { contentOf } from '../workflows/workflow.repository';
import { runWorkflowAsTool } from '../workflows/workflow.tools';
import { authoringTools, builderSystemPrompt, type CanvasSnapshot, type SavedFlow } from './builder-assist.tools';
import { chatTurnProperties, openStream } from './chat.routes';

/**
 * `POST /api/builder/assist`: one AI-panel turn in the flow builder. The body is a chat message
 * plus a snapshot of the live canvas. Before streaming, a canvas that validates is auto-saved
 * (created when it has no workflow yet; an optimistic revision check, so a stale canvas is a
 * 409); then the turn streams like `POST /api/chat` (same loop, guard, gates and frames) with
 * the authoring tools bound, plus `proposal` frames for edits. The `start` frame carries the
 * saved workflow (`workflow: {id, revision, state, autoSaved}` or null) and the canvas problems.
 */

const canvasSchema = {
  type: 'object',
  required: ['graph'],
  additionalProperties: false,
  properties: {
    graph: { type: 'object' },
    workflowId: { type: 'string', minLength: 1, maxLength: 100 },
    revision: { type: 'integer', minimum: 0 },
    name: { type: 'string', maxLength: 200 },
    description: { type: 'string', maxLength: 4000 },
    goal: { type: 'string', maxLength: 20_000 },
    diagnostics: { type: 'array', maxItems: 500 },
    lastRunError: { type: 'string', maxLength: 20_000 },
  },
} as const;

const assistBody = {
  type: 'object',
  required: ['message', 'canvas'],
  additionalProperties: false,
  properties: { ...chatTurnProperties, canvas: canvasSchema },
} as const;

type AssistBody = FromSchema<typeof assistBody>;

function snapshotOf(c: AssistBody['canvas']): CanvasSnapshot {
  const graph = parseGraph(c.graph);
  if (!graph) throw new FengYuError('assist_canvas_invalid', { reason: 'canvas.graph needs a "nodes" array' });
  return {
    graph,
    name: c.name?.trim() ?? '',
    description: c.description ?? '',
    ...(c.goal?.trim() ? { goal: c.goal } : {}),
    ...(c.workflowId ? { workflowId: c.workflowId } : {}),
    ...(c.revision !== undefined ? { revision: c.revision } : {}),
    editorDiagnostics: c.diagnostics ?? [],
    ...(c.lastRunError ? { lastRunError: c.lastRunError } : {}),
  };
}

/**
 * Saves a canvas that validates (nothing when it has no steps or any problem). An existing
 * workflow is updated only when the canvas differs from it, against the snapshot's revision.
 */
async function autoSave(ctx: HostContext, owner: string, snap: CanvasSnapshot): Promise<{ saved?: SavedFlow; autoSaved: boolean; problems: ReturnType<typeof checkGraph> }> {
  const catalog = await ctx.workflows.base.snapshot(owner);
  const problems = checkGraph(snap.graph, { tool: (n) => catalog.get(n), goal: snap.goal });
  if (problems.length > 0 || !snap.graph.nodes.some(isStepNode)) return { autoSaved: false, problems };
  const { plan, inputSchema } = graphToPlan(snap.graph, snap.goal);
  const service = ctx.workflows.service;
  let autoSaved = false;
  let id = snap.workflowId;
  if (id) {
    const def = await service.get(owner, id);
    const body = { name: snap.name || def.name, description: snap.description, inputSchema, plan, graph: { ...snap.graph } };
    const same = canonicalJson([def.name, def.description, def.inputSchema, def.plan, def.graphReconstructed ? null : def.graph]) === canonicalJson([body.name, body.description, inputSchema, plan, JSON.parse(JSON.stringify(snap.graph))]);
    if (!same) {
      await service.update(owner, id, body, snap.revision ?? def.revision);
      autoSaved = true;
    }
  } else {
    id = (await service.create(owner, { name: snap.name || 'Untitled flow', description: snap.description, inputSchema, plan, graph: { ...snap.graph } })).id;
    autoSaved = true;
  }
  const row = await service.row(owner, id);
  return { saved: { id, revision: row.revision, state: row.published_version !== null ? 'published' : 'draft', content: contentOf(row) }, autoSaved, problems };
}

export const registerBuilderAssist: DomainRegistrar = (ctx, app: FastifyInstance) => {
  registerErrors({ assist_canvas_invalid: errorSpecOf(400) });
  typedRoutes(app).post(
    '/api/builder/assist',
    { schema: { summary: 'One turn of the builder\'s AI panel over a snapshot of the live canvas; streams SSE like POST /api/chat, plus `proposal` frames', tags: ['chat'], body: assistBody } },
    async (req, reply) => {
      const body = req.body;
      const snap = snapshotOf(body.canvas);
      const { chat } = ctx.models;
      const turn = await chat.prepare(req.owner, { message: body.message, conversationId: body.conversationId, backend: body.backend, model: body.model, permissionMode: body.permissionMode });
      let state: Awaited<ReturnType<typeof autoSave>>;
      try {
        state = await autoSave(ctx, req.owner, snap);
      } catch (err) {
        chat.release(turn);
        throw err;
      }
      const { saved, autoSaved, problems } = state;
      const abort = new AbortController();
      const send = openStream(reply, () => abort.abort(), ctx.config.sseHeartbeatMs);
      const catalog = await ctx.workflows.base.snapshot(req.owner);
      const tools = authoringTools(snap, {
        catalog,
        saved,
        problems,
        newId: randomUUID,
        locale: pickLocale(req.headers['accept-language']),
        onProposal: (p) => send('proposal', { ...p }),
        runSaved: (s, args, toolCtx) =>
          runWorkflowAsTool({ agent: ctx.agent, base: ctx.workflows.base, runs: ctx.runs }, { owner: req.owner, workflowId: s.id, version: null, content: s.content, name: 'run_current_flow' }, args, toolCtx),
      });
      const workflow = saved ? { id: saved.id, revision: saved.revision, state: saved.state, autoSaved } : null;
      const sink: typeof send = Object.assign((frame: Parameters<typeof send>[0], data: Record<string, unknown>) => send(frame, frame === 'start' ? { ...data, workflow, problems: problems.length } : data), { end: send.end });
      await chat.stream(turn, sink, abort.signal, { tools, system: builderSystemPrompt(snap, saved, problems) });
      send.end();
    },
  );
};
