import type { JsonSchema, ToolEffect } from '@fengyu/protocol';
import { stableHash } from '@fengyu/protocol';
import type { Tool, ToolContext, ToolSource } from '../../src/tools/tool';

/**
 * Real tools for tests and benchmarks (they do real work in-process: sleep, echo, count),
 * registered as a tool source. Counters let a test see whether a tool really ran.
 */

export interface TestTools {
  source: ToolSource;
  calls: Map<string, number>;
  /** Intervals [start, end] of each `slow` call, for overlap checks. */
  spans: Array<{ id: string; start: number; end: number }>;
  /** Called as `write_note` and `report_start` are invoked, before they do anything else. */
  probe?: (name: string, ctx: ToolContext) => void;
}

function tool(name: string, effect: ToolEffect, inputSchema: JsonSchema, invoke: (args: Record<string, unknown>, ctx: ToolContext) => Promise<unknown>, extra: Partial<Tool> = {}): Tool {
  return {
    name,
    description: `test tool ${name}`,
    inputSchema,
    effect,
    source: 'builtin',
    id: `builtin:${name}`,
    schemaRevision: stableHash(inputSchema),
    idempotent: false,
    available: true,
    invoke,
    ...extra,
  };
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const t = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      clearTimeout(t);
      reject(signal.reason ?? new Error('aborted'));
    }, { once: true });
  });
}

export function createTestTools(): TestTools {
  const calls = new Map<string, number>();
  const spans: TestTools['spans'] = [];
  const count = (n: string) => calls.set(n, (calls.get(n) ?? 0) + 1);
  const flakyFailures = new Map<string, number>();
  const any = { type: 'object' } as JsonSchema;
  const out: TestTools = { source: { kind: 'builtin', list: async () => tools }, calls, spans };
  const tools: Tool[] = [
    tool('noop', 'read', any, async () => {
      count('noop');
      return { ok: true };
    }),
    tool('echo', 'read', { type: 'object', properties: { value: {} , text: { type: 'string' }, count: { type: 'number' } } }, async (args) => {
      count('echo');
      return { echoed: args.value ?? args.text ?? null, args };
    }),
    tool('slow', 'read', { type: 'object', properties: { ms: { type: 'number' }, id: { type: 'string' } }, required: ['ms'] }, async (args, ctx) => {
      count('slow');
      const start = Date.now();
      await sleep(Number(args.ms), ctx.signal);
      spans.push({ id: String(args.id ?? ''), start, end: Date.now() });
      return { slept: args.ms, id: args.id ?? null };
    }),
    tool('flaky', 'read', { type: 'object', properties: { key: { type: 'string' }, failures: { type: 'number' } }, required: ['key', 'failures'] }, async (args) => {
      count('flaky');
      const key = String(args.key);
      const seen = flakyFailures.get(key) ?? 0;
      if (seen < Number(args.failures)) {
        flakyFailures.set(key, seen + 1);
        throw new Error(`flaky failure ${seen + 1}`);
      }
      return { key, attempts: seen + 1 };
    }),
    tool('fail', 'read', any, async () => {
      count('fail');
      return { success: false, error: 'this tool always fails' };
    }),
    tool('write_note', 'write', { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] }, async (args, ctx) => {
      out.probe?.('write_note', ctx);
      count('write_note');
      return { written: args.text };
    }),
    tool('login', 'read', { type: 'object', properties: { user: { type: 'string' }, password: { type: 'string', writeOnly: true } }, required: ['user', 'password'] }, async (args) => {
      count('login');
      return { user: args.user, passwordLength: String(args.password).length };
    }),
    tool('send_message', 'external', { type: 'object', properties: { to: { type: 'string' } } }, async (args) => {
      count('send_message');
      return { sent: args.to ?? null };
    }),
    // reports progress before its first await (in the same turn as the call)
    tool('report_start', 'read', any, async (_args, ctx) => {
      out.probe?.('report_start', ctx);
      count('report_start');
      ctx.progress?.({ message: 'begun' });
      await new Promise((r) => setImmediate(r));
      return { reported: true };
    }),
  ];
  return out;
}
