import { isFengYuError } from '@fengyu/protocol';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { McpServersSettings } from '../../src/mcp/mcp.config';
import { McpToolSource } from '../../src/mcp/mcp-source';
import type { Tool, ToolContext } from '../../src/tools/tool';
import { waitUntil } from '../support/wait';

/** The MCP tool source against real servers: server-everything (npm) and a fixture server. */

const root = resolve(import.meta.dirname, '../../../..');
const everything = join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const fixture = join(import.meta.dirname, 'fixtures/dynamic-server.mjs');
const node = process.execPath;

let dir: string;
let logFile: string;
let servers: McpServersSettings;
let source: McpToolSource;

const ctx = (signal = new AbortController().signal): ToolContext => ({ signal, owner: 'o', permissionMode: 'full-access', grants: [] });

async function codeOf(p: Promise<unknown>): Promise<{ code: string; params: Record<string, unknown> }> {
  try {
    await p;
    return { code: 'resolved', params: {} };
  } catch (e) {
    if (isFengYuError(e)) return { code: e.code, params: e.params };
    return { code: `raw:${String(e)}`, params: {} };
  }
}

async function find(name: string): Promise<Tool> {
  const tool = (await source.list('o')).find((t) => t.name === name);
  if (!tool) throw new Error(`${name} not listed`);
  return tool;
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'fengyu-mcp-'));
  logFile = join(dir, 'fixture.log');
  writeFileSync(logFile, '');
  servers = {
    everything: { command: node, args: [everything], env: {} },
    fx: { command: node, args: [fixture], env: { FIXTURE_LOG: logFile, FIXTURE_VALUE: 'one' }, timeoutSeconds: 2 },
    broken: { command: join(dir, 'no-such-binary'), args: [], env: {} },
    quits: { command: node, args: ['-e', 'process.stderr.write("bad config, giving up\\n"); process.exit(7)'], env: {} },
    down: { url: 'http://127.0.0.1:9/mcp', headers: {}, allowPrivateNetwork: true },
  };
  source = new McpToolSource({ logger: pino({ level: 'silent' }), now: () => Date.now(), servers: async () => servers, connectTimeoutMs: 20_000 });
});

afterAll(async () => {
  await source.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('McpToolSource', () => {
  it('lists qualified tools with ids, effects and revisions; broken servers do not fail the list', async () => {
    const tools = await source.list('o');
    const echo = tools.find((t) => t.name === 'everything__echo');
    expect(echo).toMatchObject({ id: 'mcp:everything:echo', source: 'mcp', origin: 'everything', effect: 'read', idempotent: true, available: true });
    expect(echo?.inputSchema).toMatchObject({ type: 'object', properties: { message: { type: 'string' } } });
    expect(echo?.schemaRevision).toMatch(/^[0-9a-f]{8}$/);
    const byName = new Map(tools.map((t) => [t.name, t]));
    expect(byName.get('fx__plain')?.effect).toBe('write');
    expect(byName.get('fx__open')?.effect).toBe('external');
    expect(byName.get('fx__json_text')?.idempotent).toBe(true);
    expect(byName.get('fx__plain')?.idempotent).toBe(false);
    expect(tools.some((t) => t.origin === 'broken' || t.origin === 'quits')).toBe(false);
    const status = await source.status();
    const of = (n: string) => status.find((s) => s.name === n);
    expect(of('everything')?.state).toBe('ok');
    expect(of('broken')).toMatchObject({ state: 'error', source: 'mcp' });
    expect(of('broken')?.error).toMatch(/ENOENT/);
    expect(of('quits')?.state).toBe('error');
    expect(of('quits')?.error).toContain('giving up');
    expect(of('down')?.state).toBe('error');
    expect(of('down')?.error).toMatch(/ECONNREFUSED|fetch failed/);
  });

  it('gives up on a server that never answers initialize, without failing the list', async () => {
    const hung = new McpToolSource({
      logger: pino({ level: 'silent' }),
      now: () => Date.now(),
      servers: async () => ({ hang: { command: node, args: ['-e', 'setInterval(() => {}, 1000)'], env: {} } }),
      connectTimeoutMs: 500,
    });
    try {
      expect(await hung.list('o')).toEqual([]);
      const [st] = await hung.status();
      expect(st).toMatchObject({ name: 'hang', state: 'error' });
      expect(st?.error).toMatch(/timed out/i);
      // within the back-off, a second snapshot does not wait for it again
      expect(await hung.list('o')).toEqual([]);
    } finally {
      await hung.close();
    }
  });

  it('bounds what a hostile server puts in the catalog', async () => {
    const hostile = new McpToolSource({
      logger: pino({ level: 'silent' }),
      now: () => Date.now(),
      servers: async () => ({ bad: { command: node, args: [join(import.meta.dirname, 'fixtures/hostile-server.mjs')], env: {} } }),
    });
    try {
      const tools = await hostile.list('o');
      const names = tools.map((x) => x.name);
      expect(names.filter((n) => n === 'bad__dup')).toHaveLength(1);
      expect(tools.find((x) => x.name === 'bad__dup')?.description).toBe('first');
      expect(names.some((n) => n.includes(' ') || n.includes('{'))).toBe(false);
      expect(tools.length).toBe(512);
      expect(tools.find((x) => x.name === 'bad__wordy')?.description.length).toBe(4000);
      expect(await tools.find((x) => x.name === 'bad__n7')?.invoke({}, ctx())).toBe('called n7');
    } finally {
      await hostile.close();
    }
  });

  it('calls tools and maps results: text, structuredContent, JSON text, env', async () => {
    expect(await (await find('everything__echo')).invoke({ message: 'hi' }, ctx())).toBe('Echo: hi');
    expect(await (await find('everything__get-sum')).invoke({ a: 2, b: 3 }, ctx())).toBe('The sum of 2 and 3 is 5.');
    const weather = await (await find('everything__get-structured-content')).invoke({ location: 'Chicago' }, ctx());
    expect(weather).toMatchObject({ temperature: 36, humidity: 82 });
    expect(await (await find('fx__json_text')).invoke({}, ctx())).toEqual({ a: 1, list: [true, null] });
    expect(await (await find('fx__env')).invoke({}, ctx())).toBe('one');
    expect(await (await find('fx__open')).invoke({}, ctx())).toBeNull();
  });

  it('forwards MCP progress notifications to the tool context', async () => {
    const seen: Array<{ current?: number; total?: number }> = [];
    const result = await (await find('everything__trigger-long-running-operation')).invoke(
      { duration: 0.2, steps: 2 },
      { ...ctx(), progress: (p) => seen.push(p) },
    );
    expect(String(result)).toContain('Long running operation completed');
    // the SDK may settle the call before it dispatches the last notification, so only the early ones are certain
    expect(seen[0]).toEqual({ current: 1, total: 2 });
    expect(seen.every((p, i) => p.current === i + 1 && p.total === 2)).toBe(true);
  });

  it('rejects isError results with tool_failed carrying the text', async () => {
    const r = await codeOf((await find('fx__fail')).invoke({}, ctx()));
    expect(r.code).toBe('tool_failed');
    expect(r.params.reason).toBe('it broke on purpose');
    expect(r.params.name).toBe('fx__fail');
  });

  it('times out a slow call (per-server timeoutSeconds) and cancels one through the AbortSignal', async () => {
    const slow = await find('fx__slow');
    const timedOut = await codeOf(slow.invoke({ ms: 10_000 }, ctx()));
    expect(timedOut).toMatchObject({ code: 'tool_timeout', params: { name: 'fx__slow', seconds: 2 } });
    const ac = new AbortController();
    const pending = slow.invoke({ ms: 10_000 }, ctx(ac.signal));
    await waitUntil(() => readFileSync(logFile, 'utf8').split('slow start').length > 2);
    ac.abort();
    expect((await codeOf(pending)).code).toBe('tool_cancelled');
    // the cancellation reached the server (notifications/cancelled → its handler's signal)
    await waitUntil(() => readFileSync(logFile, 'utf8').split('slow cancelled').length > 2);
    expect(await slow.invoke({ ms: 1 }, ctx())).toBe('slept 1');
  });

  it('refreshes the tool list on notifications/tools/list_changed', async () => {
    expect((await source.list('o')).some((t) => t.name === 'fx__extra_later')).toBe(false);
    await (await find('fx__add_tool')).invoke({ name: 'later' }, ctx());
    await waitUntil(async () => (await source.list('o')).some((t) => t.name === 'fx__extra_later'));
    expect(await (await find('fx__extra_later')).invoke({}, ctx())).toBe('extra later');
  });

  it('survives a server crash mid-call and reconnects on the next call', async () => {
    const r = await codeOf((await find('fx__crash')).invoke({}, ctx()));
    expect(r.code).toBe('tool_failed');
    expect(await (await find('fx__env')).invoke({}, ctx())).toBe('one');
  });

  it('lets a call in flight finish on a replaced connection, and closes that connection with the source', async () => {
    let mine: McpServersSettings = { fx: { command: node, args: [fixture], env: { FIXTURE_LOG: logFile, FIXTURE_VALUE: 'old' }, timeoutSeconds: 10 } };
    const own = new McpToolSource({ logger: pino({ level: 'silent' }), now: () => Date.now(), servers: async () => mine, connectTimeoutMs: 20_000 });
    const tool = async (name: string) => (await own.list('o')).find((t) => t.name === name) as Tool;
    const change = (value: string) => {
      mine = { fx: { ...mine.fx, env: { FIXTURE_LOG: logFile, FIXTURE_VALUE: value } } as McpServersSettings[string] };
      own.applySettings('o', mine);
    };
    const starts = () => readFileSync(logFile, 'utf8').split('slow start').length;
    const slow = await tool('fx__slow');
    let before = starts();
    const finishing = slow.invoke({ ms: 300 }, ctx());
    await waitUntil(() => starts() > before);
    change('new');
    expect(await finishing).toBe('slept 300');
    expect(await (await tool('fx__env')).invoke({}, ctx())).toBe('new');
    before = starts();
    const cut = slow.invoke({ ms: 8000 }, ctx());
    await waitUntil(() => starts() > before);
    change('newer');
    await own.close();
    expect((await codeOf(cut)).code).toBe('tool_failed');
  });

  it('reconnects a server whose settings changed and drops removed servers', async () => {
    const before = await find('fx__env');
    servers = { ...servers, fx: { ...servers.fx, env: { FIXTURE_LOG: logFile, FIXTURE_VALUE: 'two' } } as McpServersSettings[string] };
    source.applySettings('o', servers);
    expect(await (await find('fx__env')).invoke({}, ctx())).toBe('two');
    // a tool from an older snapshot calls the current connection
    expect(await before.invoke({}, ctx())).toBe('two');
    const { fx: _gone, ...rest } = servers;
    servers = rest;
    source.applySettings('o', servers);
    expect((await source.list('o')).some((t) => t.origin === 'fx')).toBe(false);
    expect((await codeOf(before.invoke({}, ctx()))).code).toBe('mcp_server_not_found');
  });
});
