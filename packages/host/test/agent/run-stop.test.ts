import { stableHash } from '@fengyu/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Tool, ToolContext } from '../../src/tools/tool';
import { auto, startTestHost, type TestHost } from '../support/host';

/**
 * A run's cancellation reaches its running tool call, whether the tool reads `ctx.signal` (a real
 * AbortSignal) or only watches `ctx.abort`: on a cancel, on a step's timeout and on a shutdown.
 * Nothing of the call is reported after the cancel.
 */

interface Seen {
  /** How each call ended: `aborted:<reason name>` when told, `done` when it ran to its end. */
  ends: Map<string, string>;
  started: Set<string>;
}

const seen: Seen = { ends: new Map(), started: new Set() };

function waitTool(name: string, how: 'signal' | 'watch', extra: Partial<Tool> = {}): Tool {
  const inputSchema = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;
  return {
    name,
    description: `waits until told to stop (${how})`,
    inputSchema,
    effect: 'read',
    source: 'builtin',
    id: `builtin:${name}`,
    schemaRevision: stableHash(inputSchema),
    idempotent: false,
    available: true,
    ...extra,
    invoke: (args: Record<string, unknown>, ctx: ToolContext) =>
      new Promise((resolve, reject) => {
        const id = String(args.id);
        seen.started.add(id);
        const timer = setTimeout(() => {
          seen.ends.set(id, 'done');
          resolve({ id });
        }, 20_000);
        const stop = (reason: unknown) => {
          clearTimeout(timer);
          const code = (reason as { code?: unknown })?.code;
          seen.ends.set(id, `aborted:${typeof code === 'string' ? code : (reason as { name?: string })?.name}`);
          reject(reason);
        };
        if (how === 'signal') {
          const signal = ctx.signal;
          if (signal.aborted) return stop(signal.reason);
          signal.addEventListener('abort', () => stop(signal.reason), { once: true });
        } else {
          const watch = ctx.abort;
          if (!watch) return reject(new Error('no abort watch'));
          watch.onAbort(() => stop(watch.reason));
        }
      }),
  };
}

const tools: Tool[] = [waitTool('wait_signal', 'signal'), waitTool('wait_watch', 'watch'), waitTool('wait_short', 'signal', { timeoutSeconds: 1 }), waitTool('wait_short_watch', 'watch', { timeoutSeconds: 1 })];

let t: TestHost;
beforeAll(async () => {
  t = await startTestHost({
    beforeDomains: async (ctx) => {
      ctx.catalog.register({ kind: 'builtin', list: async () => tools });
    },
  });
});
afterAll(async () => {
  await t?.close().catch(() => undefined);
});

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1000 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  if (!check()) throw new Error(`never: ${what}`);
}

async function start(tool: string, id: string): Promise<string> {
  const res = await t.api('POST', '/api/agent/run', { config: auto, workflow: { steps: [{ id: 's', tool, arguments: { id } }] } });
  expect(res.status).toBe(200);
  await until(() => seen.started.has(id), `${id} started`);
  return res.body.runId as string;
}

describe("a run's cancellation reaches its running call", () => {
  for (const tool of ['wait_signal', 'wait_watch']) {
    it(`cancel: ${tool}'s call is told before the cancel is answered, and nothing of it is reported after`, async () => {
      const id = `cancel-${tool}`;
      const runId = await start(tool, id);
      const res = await t.api('POST', `/api/agent/${runId}/cancel`);
      expect(res.status).toBe(200);
      // told in the cancel's own turn, before its answer
      expect(seen.ends.get(id)).toBe('aborted:tool_cancelled');
      const events = await t.stream(runId);
      expect(events.at(-1)?.type).toBe('cancelled');
      const types = events.map((e) => e.type);
      const at = types.indexOf('cancel_requested');
      expect(at).toBeGreaterThan(-1);
      // no result of the call and no end of its step after the cancel was recorded
      const after = events.slice(at + 1).filter((e) => (e.type === 'tool' && e.data.phase === 'result' && e.data.result !== undefined) || (e.type === 'step_complete' && e.data.status === 'done'));
      expect(after).toEqual([]);
      expect((await t.api('GET', `/api/agent/runs/${runId}`)).body.status).toBe('cancelled');
    });
  }

  for (const tool of ['wait_short', 'wait_short_watch']) {
    it(`timeout: ${tool}'s call is told with a TimeoutError and its step fails with tool_timeout`, async () => {
      const id = `timeout-${tool}`;
      const runId = await start(tool, id);
      const events = await t.stream(runId);
      expect(seen.ends.get(id)).toBe('aborted:TimeoutError');
      const end = events.find((e) => e.type === 'step_complete');
      expect(end?.data).toMatchObject({ status: 'failed' });
      expect(String(end?.data.error)).toContain(tool);
      expect(events.at(-1)?.type).toBe('error');
    });
  }

  it('timeout: a tool that declares none gets the owner\'s backend.callTimeoutSeconds (validated 1–600)', async () => {
    expect((await t.api('GET', '/api/settings')).body.backend).toEqual({ callTimeoutSeconds: 120 });
    // refused whole, before anything is saved, naming the field
    for (const bad of [0, 601, 1.5, '30', null]) {
      const res = await t.api('PATCH', '/api/settings', { backend: { callTimeoutSeconds: bad } });
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body.error.code).toBe('invalid_settings');
      expect(JSON.stringify(res.body.error.details)).toContain('backend.callTimeoutSeconds');
    }
    expect((await t.api('PATCH', '/api/settings', { backend: { other: 1 } })).status).toBe(400);
    expect((await t.api('GET', '/api/settings')).body.backend).toEqual({ callTimeoutSeconds: 120 });
    const set = await t.api('PATCH', '/api/settings', { backend: { callTimeoutSeconds: 1 } });
    expect(set.status, JSON.stringify(set.body)).toBe(200);
    expect(set.body.backend).toEqual({ callTimeoutSeconds: 1 });
    try {
      const id = 'timeout-setting';
      const runId = await start('wait_signal', id);
      const events = await t.stream(runId);
      expect(seen.ends.get(id)).toBe('aborted:TimeoutError');
      const end = events.find((e) => e.type === 'step_complete');
      expect(end?.data).toMatchObject({ status: 'failed' });
      expect(String(end?.data.error)).toContain('wait_signal');
      expect(String(end?.data.error)).toMatch(/\b1\b/);
    } finally {
      // removing the section brings the host's default back
      expect((await t.api('PATCH', '/api/settings', { backend: null })).body.backend).toEqual({ callTimeoutSeconds: 120 });
    }
  });

  it('shutdown: both kinds of call are told, and none runs to its end', async () => {
    const a = await start('wait_signal', 'shutdown-signal');
    const b = await start('wait_watch', 'shutdown-watch');
    expect(a).not.toBe(b);
    await t.close();
    expect(seen.ends.get('shutdown-signal')).toBe('aborted:tool_cancelled');
    expect(seen.ends.get('shutdown-watch')).toBe('aborted:tool_cancelled');
  });
});
