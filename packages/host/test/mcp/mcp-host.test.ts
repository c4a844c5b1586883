import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { filesHolding } from '../support/home-bytes';
import { createServer as createHttpServer } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_OWNER } from '../../src/http/auth';
import { auto, type SseEvent, startTestHost, type TestHost } from '../support/host';
import { waitUntil } from '../support/wait';

/**
 * MCP over the real host: servers configured with PATCH /api/settings, listed by
 * GET /api/mcp/servers and the catalog, and used as steps of supplied-workflow runs.
 * Real servers from npm: server-everything (stdio and streamable HTTP) and server-filesystem.
 */

const root = resolve(import.meta.dirname, '../../../..');
const everything = join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const filesystem = join(root, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const fixture = join(import.meta.dirname, 'fixtures/dynamic-server.mjs');

let t: TestHost;
let dir: string;
let allowed: string;
let httpServer: ChildProcess;
let httpUrl: string;

function freePort(): Promise<number> {
  return new Promise((res, rej) => {
    const s = createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => res(port));
    });
    s.on('error', rej);
  });
}

async function startHttpEverything(): Promise<void> {
  const port = await freePort();
  httpServer = spawn(process.execPath, [everything, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  await new Promise<void>((res, rej) => {
    const timer = setTimeout(() => rej(new Error('streamable HTTP server did not start')), 20_000);
    httpServer.stderr?.on('data', (d: Buffer) => {
      if (d.toString().includes('listening')) {
        clearTimeout(timer);
        res();
      }
    });
    httpServer.on('exit', (code) => rej(new Error(`server exited ${code}`)));
  });
  httpUrl = `http://127.0.0.1:${port}/mcp`;
}

const run = async (workflow: unknown) => {
  const res = await t.api('POST', '/api/agent/run', { config: auto, workflow });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return t.stream(res.body.runId as string);
};
const stepDone = (events: SseEvent[], id: string) => events.find((e) => e.type === 'step_complete' && e.data.stepId === id)?.data;

beforeAll(async () => {
  dir = realpathSync(mkdtempSync(join(tmpdir(), 'fengyu-mcp-host-')));
  allowed = join(dir, 'allowed');
  await import('node:fs/promises').then((fs) => fs.mkdir(allowed));
  writeFileSync(join(allowed, 'note.txt'), 'hello from the allowed dir');
  writeFileSync(join(dir, 'secret.txt'), 'outside the root');
  await startHttpEverything();
  t = await startTestHost();
});

afterAll(async () => {
  await t?.close();
  httpServer?.kill('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
});

describe('MCP servers in the host', () => {
  it('refuses bad server names and configurations with every problem named', async () => {
    const bad = await t.api('PATCH', '/api/settings', {
      mcpServers: { 'bad name': { command: 'x' }, a__b: { command: 'x' }, ok: { command: '' }, both: { command: 'x', url: 'http://x' }, web: { url: 'ftp://x' } },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_settings');
    const fields = (bad.body.error.details as Array<{ field: string }>).map((d) => d.field).join(' ');
    for (const f of ['bad name', 'a__b', 'ok', 'both', 'web']) expect(fields).toContain(f);
  });

  it('configures stdio, streamable HTTP and filesystem servers; lists them and their tools', async () => {
    const patch = await t.api('PATCH', '/api/settings', {
      mcpServers: {
        everything: { command: process.execPath, args: [everything], env: { SOME_TOKEN: 'sekrit-value' } },
        remote: { url: httpUrl, headers: { authorization: 'Bearer sekrit-header' }, allowPrivateNetwork: true },
        fs: { command: process.execPath, args: [filesystem, allowed] },
        broken: { command: join(dir, 'missing-binary') },
      },
    });
    expect(patch.status, JSON.stringify(patch.body)).toBe(200);
    // secrets are redacted on the way out
    expect(JSON.stringify(patch.body)).not.toContain('sekrit');
    expect(patch.body.mcpServers.everything.env.SOME_TOKEN).toBe('[redacted]');
    const servers = await t.api('GET', '/api/mcp/servers');
    expect(servers.status).toBe(200);
    const by = new Map((servers.body as Array<{ name: string; state: string; transport: string; error?: string; tools: Array<{ qualifiedName: string }> }>).map((s) => [s.name, s]));
    expect(by.get('everything')).toMatchObject({ transport: 'stdio', state: 'ready' });
    expect(by.get('remote')).toMatchObject({ transport: 'http', state: 'ready' });
    expect(by.get('fs')).toMatchObject({ transport: 'stdio', state: 'ready' });
    expect(by.get('broken')?.state).toBe('error');
    expect(by.get('broken')?.error).toMatch(/ENOENT/);
    expect(by.get('remote')?.tools.map((x) => x.qualifiedName)).toContain('remote__get-sum');

    const catalog = await t.api('GET', '/api/agent/tools');
    const echo = (catalog.body as Array<Record<string, unknown>>).find((e) => e.name === 'everything__echo');
    expect(echo).toMatchObject({ id: 'mcp:everything:echo', source: 'mcp', effect: 'read', available: true });
    expect((catalog.body as Array<{ name: string }>).some((e) => e.name === 'fs__read_text_file')).toBe(true);
    const withStatus = await t.api('GET', '/api/agent/tools?include=status');
    const broken = (withStatus.body.sources as Array<{ name: string; state: string }>).find((s) => s.name === 'broken');
    expect(broken?.state).toBe('error');
  });

  it('keeps saved secrets when a client patches back the redacted value', async () => {
    const res = await t.api('PATCH', '/api/settings', {
      mcpServers: { everything: { command: process.execPath, args: [everything], env: { SOME_TOKEN: '[redacted]' } } },
    });
    expect(res.status).toBe(200);
    // The settings document (and so the database) keeps only the marker; the value is sealed in the vault.
    const saved = await t.host.ctx.settings.section<Record<string, { env: Record<string, string> }>>(DEFAULT_OWNER, 'mcpServers');
    expect(saved.everything?.env.SOME_TOKEN).toBe('[redacted]');
    const rows = await t.host.ctx.db.selectFrom('settings').select('doc').execute();
    expect(JSON.stringify(rows)).not.toContain('sekrit');
    expect(t.host.ctx.vault.getInternal(DEFAULT_OWNER, 'mcp:everything/env/SOME_TOKEN')).toBe('sekrit-value');
    expect(filesHolding(t.home, 'sekrit-value')).toEqual([]);
    // The server itself gets the real value; its echo comes back redacted (docs/secrets.md).
    const events = await run({ steps: [{ id: 'env', tool: 'everything__get-env', arguments: {} }] });
    const result = JSON.stringify(stepDone(events, 'env')?.result);
    expect(result).toContain('[redacted:mcp:everything/env/SOME_TOKEN]');
    expect(result).not.toContain('sekrit-value');
  });

  it('stores MCP header secrets like API keys: redacted in GET /api/settings, sent to the server', async () => {
    const seen: string[] = [];
    const probe = createHttpServer((req, res) => {
      seen.push(String(req.headers['x-api-key'] ?? ''));
      res.statusCode = 500;
      res.end();
    });
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    try {
      const url = `http://127.0.0.1:${(probe.address() as { port: number }).port}/mcp`;
      // Without the explicit opt-in, a loopback MCP server is refused like web_fetch refuses it: nothing is sent.
      for (const target of [url, url.replace('127.0.0.1', 'localhost'), url.replace('127.0.0.1', '[::ffff:127.0.0.1]')]) {
        expect((await t.api('PATCH', '/api/settings', { mcpServers: { probe: { url: target, headers: { 'x-api-key': 'header-sekrit-1' } } } })).status).toBe(200);
        const servers = (await t.api('GET', '/api/mcp/servers')).body as Array<{ name: string; state: string; error?: string }>;
        const probeView = servers.find((x) => x.name === 'probe');
        expect(probeView?.state, target).toBe('error');
        expect(probeView?.error, target).toMatch(/loopback|private|refused|blocked/i);
      }
      expect(seen).toEqual([]);
      const patch = await t.api('PATCH', '/api/settings', { mcpServers: { probe: { url, headers: { 'x-api-key': 'header-sekrit-1' }, allowPrivateNetwork: true } } });
      expect(patch.status, JSON.stringify(patch.body)).toBe(200);
      expect(patch.body.mcpServers.probe.headers['x-api-key']).toBe('[redacted]');
      const got = await t.api('GET', '/api/settings');
      expect(JSON.stringify(got.body)).not.toContain('header-sekrit');
      expect(JSON.stringify(await t.host.ctx.db.selectFrom('settings').select('doc').execute())).not.toContain('header-sekrit');
      await t.api('POST', '/api/mcp/servers/probe/reconnect');
      await waitUntil(() => seen.includes('header-sekrit-1'));
      // Patching the marker back keeps the stored value.
      const back = await t.api('PATCH', '/api/settings', { mcpServers: { probe: { url, headers: { 'x-api-key': '[redacted]' }, allowPrivateNetwork: true, timeoutSeconds: 5 } } });
      expect(back.status).toBe(200);
      seen.length = 0;
      await t.api('POST', '/api/mcp/servers/probe/reconnect');
      await waitUntil(() => seen.length > 0);
      expect(seen.every((h) => h === 'header-sekrit-1')).toBe(true);
    } finally {
      await t.api('PATCH', '/api/settings', { mcpServers: { probe: null } });
      probe.closeAllConnections();
      await new Promise((r) => probe.close(r));
    }
  });

  it('runs a supplied workflow whose steps are MCP tools over stdio, HTTP and filesystem', async () => {
    const events = await run({
      steps: [
        { id: 'echo', tool: 'everything__echo', arguments: { message: 'via stdio' } },
        { id: 'sum', tool: 'remote__get-sum', arguments: { a: 20, b: 22 } },
        { id: 'read', tool: 'fs__read_text_file', arguments: { path: join(allowed, 'note.txt') } },
        { id: 'again', tool: 'everything__echo', dependsOn: ['echo', 'read'], arguments: { message: '{{node.echo.result}} + {{node.read.result.content}}' } },
      ],
    });
    expect(events.at(-1)?.type, JSON.stringify(events.at(-1)?.data)).toBe('complete');
    expect(stepDone(events, 'echo')?.result).toBe('Echo: via stdio');
    expect(stepDone(events, 'sum')?.result).toBe('The sum of 20 and 22 is 42.');
    expect(JSON.stringify(stepDone(events, 'read')?.result)).toContain('hello from the allowed dir');
    expect(String(stepDone(events, 'again')?.result)).toContain('Echo: Echo: via stdio');
    const calls = events.filter((e) => e.type === 'tool' && e.data.phase === 'call').map((e) => e.data.name);
    expect(calls).toEqual(expect.arrayContaining(['everything__echo', 'remote__get-sum', 'fs__read_text_file']));
  });

  it('fails the step when the filesystem server refuses a path outside its root (isError)', async () => {
    const events = await run({ steps: [{ id: 'outside', tool: 'fs__read_text_file', arguments: { path: join(dir, 'secret.txt') } }] });
    const done = stepDone(events, 'outside');
    expect(done?.status).toBe('failed');
    expect(String(done?.error)).toContain('Tool "fs__read_text_file" failed: Access denied');
    expect(JSON.stringify(events)).not.toContain('outside the root');
    expect(['error', 'complete']).toContain(events.at(-1)?.type);
  });

  it('reconnects on a settings change and removes a deleted server from the catalog', async () => {
    const res = await t.api('PATCH', '/api/settings', { mcpServers: { remote: null, broken: null } });
    expect(res.status).toBe(200);
    const catalog = await t.api('GET', '/api/agent/tools');
    const names = (catalog.body as Array<{ name: string }>).map((e) => e.name);
    expect(names.some((n) => n.startsWith('remote__'))).toBe(false);
    expect(names).toContain('everything__echo');
    const servers = await t.api('GET', '/api/mcp/servers');
    expect((servers.body as Array<{ name: string }>).map((s) => s.name).sort()).toEqual(['everything', 'fs']);
    const missing = await t.api('POST', '/api/mcp/servers/remote/reconnect');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('mcp_server_not_found');
  });

  it('cancels a running MCP call from POST /api/agent/{id}/cancel, reaching the server', async () => {
    const log = join(dir, 'fixture.log');
    writeFileSync(log, '');
    const patch = await t.api('PATCH', '/api/settings', { mcpServers: { fx: { command: process.execPath, args: [fixture], env: { FIXTURE_LOG: log } } } });
    expect(patch.status).toBe(200);
    const res = await t.api('POST', '/api/agent/run', { config: auto, workflow: { steps: [{ id: 'wait', tool: 'fx__slow', arguments: { ms: 30_000 } }] } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const runId = res.body.runId as string;
    await waitUntil(() => readFileSync(log, 'utf8').includes('slow start'));
    expect((await t.api('POST', `/api/agent/${runId}/cancel`)).status).toBe(200);
    const events = await t.stream(runId);
    expect(events.at(-1)?.type).toBe('cancelled');
    await waitUntil(() => readFileSync(log, 'utf8').includes('slow cancelled'));
  });

  it('shows tools a server adds at run time (tools/list_changed) in the next catalog', async () => {
    const before = await t.api('GET', '/api/agent/tools');
    expect((before.body as Array<{ name: string }>).some((e) => e.name === 'fx__extra_late')).toBe(false);
    const events = await run({ steps: [{ id: 'add', tool: 'fx__add_tool', arguments: { name: 'late' } }] });
    expect(events.at(-1)?.type).toBe('complete');
    await waitUntil(async () => ((await t.api('GET', '/api/agent/tools')).body as Array<{ name: string }>).some((e) => e.name === 'fx__extra_late'));
    const used = await run({ steps: [{ id: 'use', tool: 'fx__extra_late', arguments: {} }] });
    expect(stepDone(used, 'use')?.result).toBe('extra late');
  });
});
