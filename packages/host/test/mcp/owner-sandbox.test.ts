import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { detectSandbox } from '../../src/plugins/sandbox';
import { startTestHost, type TestHost } from '../support/host';

/**
 * A second owner's MCP stdio server runs in the same owner sandbox as that owner's commands:
 * it cannot read FENGYU_HOME (the primary token), other processes' environments or the host's
 * environment. Without a sandbox it is refused (at save, and again when it would start) until
 * the primary owner allows unsandboxed owners. The server is a real stdio MCP server (a
 * dependency-free one passed to node with -e, so nothing it needs lies in a hidden directory).
 */

const SECRET = 'sk-host-secret-mcp-4242';
const bwrapHere = Boolean(detectSandbox('auto', process.env).bwrapPath);

/** A minimal MCP server: one tool `read` that reports what it can see. */
const SERVER = String.raw`
const fs = require('node:fs');
const home = process.env.PROBE_HOME;
function probe() {
  const out = [];
  try { out.push('token=' + fs.readFileSync(home + '/token', 'utf8')); } catch (e) { out.push('token-error=' + e.code); }
  try { fs.writeFileSync(home + '/mcp-was-here', 'x'); out.push('wrote-home'); } catch (e) { out.push('write-error=' + e.code); }
  for (const p of fs.readdirSync('/proc').filter((d) => /^[0-9]+$/.test(d))) {
    try { out.push('environ ' + p + ' ' + fs.readFileSync('/proc/' + p + '/environ', 'utf8').split('\0').join(' ')); } catch {}
  }
  out.push('env ' + JSON.stringify(process.env));
  out.push('OWNENV=' + Object.keys(process.env).join(',') + ';');
  out.push('pid=' + process.pid + ' cwd=' + process.cwd());
  return out.join('\n');
}
let buf = '';
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
process.stdin.on('data', (d) => {
  buf += d;
  let i;
  while ((i = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, i); buf = buf.slice(i + 1);
    if (!line.trim()) continue;
    const m = JSON.parse(line);
    if (m.id === undefined) continue;
    if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'probe', version: '1.0.0' } } });
    else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name: 'read', description: 'what the server sees', inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } }] } });
    else if (m.method === 'tools/call') send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: probe() }] } });
    else send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no such method' } });
  }
});
`;

function serverConfig(home: string) {
  return { probe: { command: process.execPath, args: ['-e', SERVER], env: { PROBE_HOME: home, PROBE_KEY: 'owner-own-value' } } };
}

async function callProbe(t: TestHost, token: string): Promise<{ status: string; text: string; error?: string }> {
  const res = await t.api('POST', '/api/agent/run', { goal: 'probe', config: { planApproval: false, permissionMode: 'full-access' }, workflow: { steps: [{ id: 's', tool: 'probe__read', arguments: {} }] } }, { 'x-fengyu-token': token });
  if (res.status !== 200) return { status: `http ${res.status}`, text: '', error: JSON.stringify(res.body) };
  const runId = res.body.runId as string;
  for (;;) {
    const run = (await t.api('GET', `/api/agent/runs/${runId}`, undefined, { 'x-fengyu-token': token })).body;
    if (['completed', 'failed', 'cancelled', 'interrupted'].includes(run.status)) {
      const done = run.events.find((e: { type: string }) => e.type === 'step_complete');
      const payload = done?.payload ?? done?.data ?? done;
      return { status: run.status, text: JSON.stringify(payload?.result ?? ''), error: payload?.error };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(!bwrapHere)("a second owner's MCP stdio server on a host with bubblewrap", () => {
  let t: TestHost;
  let bob: string;
  let primaryToken: string;
  beforeAll(async () => {
    t = await startTestHost({ sandbox: 'auto', env: { ...process.env, FENGYU_TEST_SECRET: SECRET } });
    primaryToken = readFileSync(join(t.home, 'token'), 'utf8').trim();
    bob = (await t.api('POST', '/api/owners', { name: 'bob' })).body.token;
  });
  afterAll(() => t?.close());

  it('the primary owner\'s server reads the token file (the probe is real)', async () => {
    expect((await t.api('PATCH', '/api/settings', { mcpServers: serverConfig(t.home) })).status).toBe(200);
    const r = await callProbe(t, t.host.token);
    expect(r.status, r.error).toBe('completed');
    expect(r.text).toContain(primaryToken);
    expect(existsSync(join(t.home, 'mcp-was-here'))).toBe(true);
    rmSync(join(t.home, 'mcp-was-here'));
  });

  it("runs the owner's server sandboxed: no token, no host environment, no writes to FENGYU_HOME", async () => {
    const saved = await t.api('PATCH', '/api/settings', { mcpServers: serverConfig(t.home) }, { 'x-fengyu-token': bob });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    const r = await callProbe(t, bob);
    expect(r.status, r.error).toBe('completed');
    expect(r.text).not.toContain(primaryToken);
    expect(r.text).not.toContain(SECRET);
    expect(r.text).not.toContain('FENGYU_TOKEN');
    expect(r.text).toContain('token-error=ENOENT');
    // the owner's own value reached its server, and came back redacted like every secret in a result
    expect(r.text).toContain('[redacted:mcp:probe/env/PROBE_KEY]');
    expect(r.text).not.toContain('owner-own-value');
    expect(r.text).toMatch(/cwd=\S*\/runs\/adhoc-[^/]+\/work/);
    expect(existsSync(join(t.home, 'mcp-was-here'))).toBe(false);
  });
});

describe("a second owner's MCP stdio server on a host without a sandbox", () => {
  let t: TestHost;
  let bob: string;
  beforeAll(async () => {
    t = await startTestHost({ sandbox: 'off', env: { ...process.env, FENGYU_TEST_SECRET: SECRET } });
    bob = (await t.api('POST', '/api/owners', { name: 'bob' })).body.token;
  });
  afterAll(() => t?.close());

  it('is refused at save with a clear localized error naming the server', async () => {
    const en = await t.api('PATCH', '/api/settings', { mcpServers: serverConfig(t.home) }, { 'x-fengyu-token': bob });
    expect(en.status).toBe(400);
    const problem = en.body.error.details.find((p: { code: string }) => p.code === 'mcp_isolation_unavailable');
    expect(problem?.field).toBe('mcpServers.probe');
    expect(problem?.message).toMatch(/MCP server "probe" of owner "bob" must run in the bubblewrap sandbox/);
    const zh = await t.api('PATCH', '/api/settings', { mcpServers: serverConfig(t.home) }, { 'x-fengyu-token': bob, 'accept-language': 'zh-CN' });
    expect(zh.body.error.details[0].message).toContain('MCP 服务器 "probe" 必须在 bubblewrap 沙箱中运行');
    // the primary owner's own servers are not affected
    expect((await t.api('PATCH', '/api/settings', { mcpServers: serverConfig(t.home) })).status).toBe(200);
  });

  it('is refused when it would start (the sandbox went away after saving), then runs with the allow-listed environment once allowed', async () => {
    await t.api('PATCH', '/api/settings', { commands: { allowUnsandboxedOwners: true } });
    expect((await t.api('PATCH', '/api/settings', { mcpServers: serverConfig(t.home) }, { 'x-fengyu-token': bob })).status).toBe(200);
    await t.api('PATCH', '/api/settings', { commands: { allowUnsandboxedOwners: false } });
    const refused = await callProbe(t, bob);
    expect(refused.status).not.toBe('completed');
    const servers = (await t.api('GET', '/api/mcp/servers', undefined, { 'x-fengyu-token': bob })).body as Array<{ name: string; state: string; error?: string }>;
    expect(servers.find((s) => s.name === 'probe')).toMatchObject({ state: 'error', error: expect.stringMatching(/bubblewrap/) });

    await t.api('PATCH', '/api/settings', { commands: { allowUnsandboxedOwners: true } });
    await t.api('POST', '/api/mcp/servers/probe/reconnect', undefined, { 'x-fengyu-token': bob });
    const ok = await callProbe(t, bob);
    expect(ok.status, ok.error).toBe('completed');
    // unsandboxed it can read what the host user can (documented); its own environment is still the allow-list
    const own = /OWNENV=([^;]*);/.exec(ok.text)?.[1] ?? '';
    expect(own).toContain('PROBE_KEY');
    expect(own).not.toMatch(/FENGYU_TEST_SECRET|FENGYU_TOKEN/);
  });
});
