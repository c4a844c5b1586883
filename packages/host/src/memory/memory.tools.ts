import { FengYuError, type JsonSchema, type ToolEffect, stableHash } from '@fengyu/protocol';
import type { Tool, ToolContext, ToolSource } from '../tools/tool';
import { MAX_MEMORY_CHARS, type MemoryService } from './memory.service';

/**
 * The memory_* tools, a built-in ToolSource listed only for owners who enabled memory.
 * remember/forget change durable state (effect `write`, so `ask` mode confirms them);
 * search/list are reads.
 */

interface Spec {
  name: string;
  description: string;
  effect: ToolEffect;
  inputSchema: JsonSchema;
  run: (svc: MemoryService, owner: string, args: Record<string, unknown>, ctx: ToolContext) => Promise<unknown>;
}

const limitSchema = { type: 'integer', minimum: 1, maximum: 50, description: 'How many to return (default 5 for search, 20 for list).' };

const SPECS: Spec[] = [
  {
    name: 'memory_remember',
    description: 'Store a durable fact about the user or their work for later sessions (one short sentence).',
    effect: 'write',
    inputSchema: { type: 'object', properties: { content: { type: 'string', minLength: 1, maxLength: MAX_MEMORY_CHARS } }, required: ['content'], additionalProperties: false },
    run: (svc, owner, a, ctx) => svc.remember(owner, str(a, 'content'), { ...(ctx.runId ? { runId: ctx.runId } : {}), ...(ctx.conversationId ? { conversationId: ctx.conversationId } : {}) }),
  },
  {
    name: 'memory_search',
    description: 'Find stored memories relevant to a query (keyword match, recent ones weigh more).',
    effect: 'read',
    inputSchema: { type: 'object', properties: { query: { type: 'string', minLength: 1 }, limit: limitSchema }, required: ['query'], additionalProperties: false },
    run: async (svc, owner, a) => ({ memories: await svc.search(owner, str(a, 'query'), int(a, 'limit', 5)) }),
  },
  {
    name: 'memory_list',
    description: 'List the most recent stored memories.',
    effect: 'read',
    inputSchema: { type: 'object', properties: { limit: limitSchema }, additionalProperties: false },
    run: async (svc, owner, a) => ({ memories: await svc.list(owner, int(a, 'limit', 20)) }),
  },
  {
    name: 'memory_forget',
    description: 'Delete one stored memory by its id (from memory_list or memory_search).',
    effect: 'write',
    inputSchema: { type: 'object', properties: { id: { type: 'string', minLength: 1 } }, required: ['id'], additionalProperties: false },
    run: async (svc, owner, a) => ({ forgotten: await svc.forget(owner, str(a, 'id')) }),
  },
];

function str(args: Record<string, unknown>, key: string): string {
  const v = args[key];
  if (typeof v !== 'string' || !v.trim()) throw new FengYuError('invalid_request', { reason: `"${key}" must be a non-empty string` });
  return v;
}

function int(args: Record<string, unknown>, key: string, fallback: number): number {
  const v = args[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > 50) throw new FengYuError('invalid_request', { reason: `"${key}" must be an integer from 1 to 50` });
  return v;
}

function toTool(svc: MemoryService, spec: Spec): Tool {
  return {
    name: spec.name,
    description: spec.description,
    inputSchema: spec.inputSchema,
    effect: spec.effect,
    source: 'builtin',
    id: `builtin:${spec.name}`,
    schemaRevision: stableHash(spec.inputSchema),
    idempotent: spec.effect === 'read',
    available: true,
    invoke: (args: Record<string, unknown>, ctx: ToolContext) => spec.run(svc, ctx.owner, args, ctx),
  };
}

export class MemoryToolSource implements ToolSource {
  readonly kind = 'builtin' as const;
  private readonly tools: Tool[];

  constructor(private readonly svc: MemoryService) {
    this.tools = SPECS.map((s) => toTool(svc, s));
  }

  async list(owner: string): Promise<Tool[]> {
    return (await this.svc.enabled(owner)) ? this.tools : [];
  }

  listNow(owner: string): readonly Tool[] | undefined {
    const enabled = this.svc.enabledNow(owner);
    return enabled === undefined ? undefined : enabled ? this.tools : [];
  }
}
