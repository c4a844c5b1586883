import { FengYuError, type JsonSchema, stableHash, type ToolEffect } from '@fengyu/protocol';
import { keptFilesSchema } from '../files/kept-files';
import type { Tool, ToolContext, ToolSource } from '../tools/tool';
import type { TaskExecutor } from './task-executor';

/**
 * The model's side of background tasks: submit a published workflow (normal priority, the
 * caller's permission mode), read or wait for its output, list, check capacity, kill. Capacity
 * exhaustion is a structured result the model can act on, not an error. Another owner's task is
 * "not found" to every tool.
 */

export const MAX_WAIT_MS = 60_000;
const DEFAULT_WAIT_MS = 30_000;

const timeoutMs = { type: 'integer', minimum: 0, maximum: MAX_WAIT_MS, description: `How long to block, in ms (default ${DEFAULT_WAIT_MS}, at most ${MAX_WAIT_MS}).` };

function tool(name: string, description: string, effect: ToolEffect, inputSchema: JsonSchema, invoke: Tool['invoke'], timeoutSeconds?: number): Tool {
  return {
    name,
    description,
    inputSchema,
    effect,
    source: 'builtin',
    id: `builtin:${name}`,
    schemaRevision: stableHash({ inputSchema }),
    idempotent: effect === 'read',
    available: true,
    ...(timeoutSeconds ? { timeoutSeconds } : {}),
    invoke,
  };
}

function waitMs(v: unknown): number {
  if (v === undefined || v === null) return DEFAULT_WAIT_MS;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > MAX_WAIT_MS) throw new FengYuError('task_field_invalid', { field: 'timeoutMs', allowed: `an integer from 0 to ${MAX_WAIT_MS}` });
  return v;
}

function taskId(v: unknown): string {
  if (typeof v !== 'string' || v === '') throw new FengYuError('task_field_invalid', { field: 'taskId', allowed: 'a task id' });
  return v;
}

/** Validates `{ids, mode}` of a wait (1..20 distinct ids; any or all). */
export function waitRequest(ids: unknown, mode: unknown): { ids: string[]; mode: 'any' | 'all' } {
  if (!Array.isArray(ids) || ids.length < 1 || ids.length > 20 || !ids.every((i) => typeof i === 'string' && i !== '')) {
    throw new FengYuError('task_field_invalid', { field: 'ids', allowed: '1 to 20 task ids' });
  }
  const m = mode ?? 'all';
  if (m !== 'any' && m !== 'all') throw new FengYuError('task_field_invalid', { field: 'mode', allowed: '"any" or "all"' });
  return { ids: [...new Set(ids as string[])], mode: m };
}

/** Stops blocking when the calling step is cancelled. */
function abortable<T>(signal: AbortSignal, p: Promise<T>): Promise<T> {
  if (signal.aborted) return Promise.reject(new FengYuError('tool_cancelled', { name: 'task' }));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(new FengYuError('tool_cancelled', { name: 'task' }));
    signal.addEventListener('abort', onAbort, { once: true });
    p.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

export function taskTools(registry: TaskExecutor): Tool[] {
  return [
    tool(
      'task_submit_workflow',
      'Start a published workflow as a background task and return at once with {taskId, task}. A file input takes an upload through `files`. Use task_output or task_wait for its result. When capacity is exhausted the result is {success:false, retryable, retryAfterSeconds, capacityScope, capacityPriority?}: retry after that many seconds.',
      'external',
      {
        type: 'object',
        required: ['workflowId'],
        additionalProperties: false,
        properties: { workflowId: { type: 'string', minLength: 1, description: 'The id of a published workflow.' }, inputs: { type: 'object', description: 'The workflow inputs.' }, files: keptFilesSchema() },
      },
      async (args, ctx: ToolContext) => {
        const r = await registry.submit({
          ownerId: ctx.owner,
          workflowId: String(args.workflowId ?? ''),
          inputs: (args.inputs as Record<string, unknown> | undefined) ?? {},
          // checked like the REST body's (the owner's uploads, declared file inputs) before queueing
          ...(args.files !== undefined ? { files: args.files } : {}),
          priority: 'normal',
          kind: 'workflow',
          permissionMode: ctx.permissionMode,
        });
        if (!r.ok) return { success: false, ...r.refusal };
        return { taskId: r.task.id, task: r.task };
      },
    ),
    tool(
      'task_output',
      'Return a background task\'s snapshot (state, output, error), blocking up to timeoutMs for it to finish.',
      'read',
      { type: 'object', required: ['taskId'], additionalProperties: false, properties: { taskId: { type: 'string', minLength: 1 }, timeoutMs } },
      async (args, ctx) => abortable(ctx.signal, registry.output(ctx.owner, taskId(args.taskId), waitMs(args.timeoutMs))),
      MAX_WAIT_MS / 1000 + 5,
    ),
    tool(
      'task_wait',
      'Wait for any or all of 1 to 20 background tasks to finish, up to timeoutMs; returns {tasks, timedOut}.',
      'read',
      {
        type: 'object',
        required: ['ids'],
        additionalProperties: false,
        properties: { ids: { type: 'array', minItems: 1, maxItems: 20, items: { type: 'string', minLength: 1 } }, mode: { type: 'string', enum: ['any', 'all'], description: 'Default "all".' }, timeoutMs },
      },
      async (args, ctx) => {
        const w = waitRequest(args.ids, args.mode);
        return abortable(ctx.signal, registry.wait(ctx.owner, w.ids, w.mode, waitMs(args.timeoutMs)));
      },
      MAX_WAIT_MS / 1000 + 5,
    ),
    tool('task_list', 'List your background tasks, newest first (priority, queued or running, output, errors).', 'read', { type: 'object', additionalProperties: false, properties: {} }, async (_args, ctx) =>
      registry.list(ctx.owner, { limit: 50 }),
    ),
    tool(
      'task_capacity',
      'Report background-task capacity: running and queued counts, the priority mix, reservations, oldest waits per class, saturation, the scheduling policy, and your own share and queue allowance.',
      'read',
      { type: 'object', additionalProperties: false, properties: {} },
      async (_args, ctx) => registry.capacity(ctx.owner),
    ),
    tool(
      'task_kill',
      'Stop a background task: a queued one is cancelled before it starts; a running one is cancelled, then its processes are terminated.',
      'write',
      { type: 'object', required: ['taskId'], additionalProperties: false, properties: { taskId: { type: 'string', minLength: 1 } } },
      async (args, ctx) => registry.kill(ctx.owner, taskId(args.taskId)),
      30,
    ),
  ];
}

export function taskToolSource(registry: TaskExecutor): ToolSource {
  const tools = taskTools(registry);
  return { kind: 'builtin', list: async () => tools, listNow: () => tools };
}
