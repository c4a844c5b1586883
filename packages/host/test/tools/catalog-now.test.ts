import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ToolCatalog } from '../../src/tools/catalog';
import type { Tool, ToolSource } from '../../src/tools/tool';
import { auto, type SseEvent, startTestHost, type TestHost } from '../support/host';
import { type ScriptedOpenAI, startScriptedOpenAI } from '../support/scripted-openai';

/**
 * A run's catalog snapshot and its end's chat-backend check are answered from what is at hand
 * (the owner's settings already read, the plugin list unchanged) without awaiting each source;
 * nothing is kept that could go stale: a setting saved while the host runs applies to the next run.
 */

const tool = (name: string): Tool =>
  ({ name, id: `builtin:${name}`, description: name, inputSchema: { type: 'object' }, effect: 'read', source: 'builtin', schemaRevision: '1', idempotent: true, available: true, invoke: async () => null }) as Tool;

describe('catalog sources that answer at once', () => {
  it('are not asked to list; one that does not know yet, or fails, is asked or left out', async () => {
    const a = tool('a');
    const b = tool('b');
    const asked: string[] = [];
    let bNow: readonly Tool[] | undefined;
    const catalog = new ToolCatalog();
    catalog.register({ kind: 'builtin', list: async () => (asked.push('a'), [a]), listNow: () => [a] });
    catalog.register({ kind: 'plugin', list: async () => (asked.push('b'), [b]), listNow: () => bNow });
    catalog.register({
      kind: 'mcp',
      list: async () => (asked.push('broken'), []),
      listNow: () => {
        throw new Error('broken');
      },
    } satisfies ToolSource);
    const first = await catalog.snapshot('default');
    expect(first.tools).toEqual([a, b]);
    expect(asked).toEqual(['b']);
    bNow = [b];
    expect(await catalog.snapshot('default')).toBe(first);
    expect(asked).toEqual(['b']);
    bNow = [];
    expect((await catalog.snapshot('default')).tools).toEqual([a]);
    expect(asked).toEqual(['b']);
  });
});

describe('on a real host, a setting saved between runs applies to the next run', () => {
  let t: TestHost;
  let llm: ScriptedOpenAI;
  const fixture = join(import.meta.dirname, '../mcp/fixtures/dynamic-server.mjs');

  beforeAll(async () => {
    t = await startTestHost();
    llm = await startScriptedOpenAI();
  });
  afterAll(async () => {
    await t?.close();
    await llm?.close();
  });

  const post = (steps: unknown[]) => t.api('POST', '/api/agent/run', { workflow: { steps }, config: auto });
  const runTo = async (steps: unknown[]): Promise<SseEvent[]> => {
    const res = await post(steps);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return t.stream(res.body.runId as string);
  };
  const refusedFor = async (tool: string) => {
    const res = await post([{ id: 'a', tool, arguments: {} }]);
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(JSON.stringify(res.body)).toContain(tool);
  };
  const patch = async (body: unknown) => {
    const res = await t.api('PATCH', '/api/settings', body);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
  };

  it('memory turned on and off: its tools appear and leave', async () => {
    // warm: the owner's settings are read, so later snapshots answer from them
    await runTo([{ id: 'a', tool: 'echo', arguments: { value: 1 } }]);
    await refusedFor('memory_list');
    await patch({ memory: { enabled: true } });
    const on = await runTo([{ id: 'a', tool: 'memory_list', arguments: {} }]);
    expect(on.at(-1)?.type, JSON.stringify(on.at(-1))).toBe('complete');
    await patch({ memory: { enabled: false } });
    await refusedFor('memory_list');
  });

  it('an MCP server added and removed: its tools appear and leave', async () => {
    await refusedFor('fx__json_text');
    await patch({ mcpServers: { fx: { command: process.execPath, args: [fixture] } } });
    const added = await runTo([{ id: 'a', tool: 'fx__json_text', arguments: {} }]);
    expect(added.at(-1)?.type, JSON.stringify(added.at(-1))).toBe('complete');
    await patch({ mcpServers: { fx: null } });
    await refusedFor('fx__json_text');
    const servers = await t.api('GET', '/api/mcp/servers');
    expect(servers.body).toEqual([]);
  });

  it('a chat backend configured and removed: the next run ends with the model summary, then the plain one', async () => {
    const summary = async () => {
      const events = await runTo([{ id: 'a', tool: 'echo', arguments: { value: 2 } }]);
      expect(events.at(-1)?.type).toBe('complete');
      return events.at(-1)?.data.summary;
    };
    expect(await summary()).toBe('Completed 1 step(s).');
    await patch({ backends: [{ id: 'local', provider: 'openai-compatible', baseURL: llm.url, model: 'scripted' }] });
    llm.push({ text: 'The model summed it up.' });
    expect(await summary()).toBe('The model summed it up.');
    await patch({ backends: [] });
    const requests = llm.requests.length;
    expect(await summary()).toBe('Completed 1 step(s).');
    expect(llm.requests.length).toBe(requests);
  });
});
