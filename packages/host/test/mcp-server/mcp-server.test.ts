import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';

/** Published workflows served over MCP: the SDK's own client over HTTP and over the stdio bridge. */

const root = join(import.meta.dirname, '../../../..');
let t: TestHost;
beforeAll(async () => {
  t = await startTestHost({ mcpCallPatienceMs: 1500 });
});
afterAll(async () => {
  await t?.close();
});

const schema = { type: 'object', required: ['text'], properties: { text: { type: 'string', description: 'What to echo' } } };

async function workflow(name: string, plan: unknown, mcp?: unknown, publish = true): Promise<string> {
  const def = (await t.api('POST', '/api/workflows', { name, description: `${name} described`, inputSchema: schema, plan })).body;
  let revision = def.revision as number;
  if (mcp) {
    const saved = await t.api('PUT', `/api/workflows/${def.id}`, { revision, mcp });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    revision = saved.body.revision;
  }
  if (publish) expect((await t.api('POST', `/api/workflows/${def.id}/publish`, { revision })).status).toBe(200);
  return def.id;
}

async function httpClient(headers: Record<string, string>): Promise<Client> {
  const client = new Client({ name: 'test', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${t.host.url}/mcp`), { requestInit: { headers } }));
  return client;
}

const echo = { steps: [{ id: 'say', tool: 'echo', arguments: { value: '{{inputs.text}}' } }] };
let gatedId: string;

beforeAll(async () => {
  await workflow('Echo me', echo, { enabled: true, permissionMode: 'approve-for-me' });
  await workflow('Not served', echo);
  await workflow('Served but draft only', echo, { enabled: true }, false);
  await workflow('回显', echo, { enabled: true, permissionMode: 'full-access' });
  gatedId = await workflow('Needs approval', { steps: [{ id: 'say', tool: 'echo', requiresApproval: true, arguments: { value: '{{inputs.text}}' } }] }, { enabled: true, permissionMode: 'ask' });
});

describe('the MCP server at /mcp', () => {
  it('lists only published workflows with mcp.enabled, as wf_<slug> with their description and input schema', async () => {
    const client = await httpClient({ authorization: `Bearer ${t.host.token}` });
    const { tools } = await client.listTools();
    const names = tools.map((x) => x.name).sort();
    expect(names).toEqual(['wf_echo_me', 'wf_needs_approval', expect.stringMatching(/^wf_[0-9a-f]{12}$/)].sort());
    const tool = tools.find((x) => x.name === 'wf_echo_me');
    expect(tool?.description).toBe('Echo me described');
    expect(tool?.inputSchema).toMatchObject({ type: 'object', required: ['text'], properties: { text: { type: 'string' } } });
    await client.close();
  });

  it('runs the published version and answers with the result as text and structuredContent', async () => {
    const client = await httpClient({ 'x-fengyu-token': t.host.token });
    const res = await client.callTool({ name: 'wf_echo_me', arguments: { text: 'hello' } });
    expect(res.isError).toBeFalsy();
    expect(res.structuredContent).toMatchObject({ echoed: 'hello' });
    expect((res.content as Array<{ text: string }>)[0]?.text).toContain('"echoed": "hello"');
    // the run is in the history, started by MCP
    const runs = (await t.api('GET', '/api/agent/runs?q=')).body.runs as Array<{ origin?: string }>;
    expect(runs.some((r) => r.origin === 'mcp')).toBe(true);
    await client.close();
  });

  it('answers bad arguments and unknown tools with MCP errors, never a 500', async () => {
    const client = await httpClient({ 'x-fengyu-token': t.host.token });
    await expect(client.callTool({ name: 'wf_echo_me', arguments: { text: 42 } })).rejects.toThrow(/text/);
    await expect(client.callTool({ name: 'wf_echo_me', arguments: {} })).rejects.toThrow(/text/);
    await expect(client.callTool({ name: 'wf_not_served', arguments: { text: 'x' } })).rejects.toThrow(/Unknown tool/);
    await client.close();
    const malformed = await fetch(`${t.host.url}/mcp`, { method: 'POST', headers: { 'x-fengyu-token': t.host.token, 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{"jsonrpc":"2.0","method":' });
    expect(malformed.status).toBe(400);
  });

  it('answers a call whose run waits at a gate with the run id and the inbox; the run goes on once approved', async () => {
    const client = await httpClient({ 'x-fengyu-token': t.host.token });
    const res = await client.callTool({ name: 'wf_needs_approval', arguments: { text: 'later' } });
    expect(res.isError).toBe(true);
    const runId = (res.structuredContent as { runId: string }).runId;
    expect((res.content as Array<{ text: string }>)[0]?.text).toContain(`${t.host.url}/inbox`);
    expect((res.content as Array<{ text: string }>)[0]?.text).not.toContain(t.host.token);
    await t.waitFor(runId, 'step_approval_requested');
    expect((await t.api('POST', `/api/agent/${runId}/approve`, {})).status).toBe(200);
    expect((await t.waitFor(runId, 'complete')).data.result).toMatchObject({ echoed: 'later' });
    await client.close();
    expect(gatedId).toBeTruthy();
  });

  it('keeps the front door: no token, a wrong token, a miscased path, a foreign Origin', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
    const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    expect((await fetch(`${t.host.url}/mcp`, { method: 'POST', headers, body })).status).toBe(401);
    expect((await fetch(`${t.host.url}/mcp`, { method: 'POST', headers: { ...headers, authorization: 'Bearer nope-nope-nope-nope' }, body })).status).toBe(401);
    // another spelling of the path is refused, never served without the route's own rules
    expect((await fetch(`${t.host.url}/MCP`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${t.host.token}` }, body })).status).toBe(401);
    expect((await fetch(`${t.host.url}/mcp`, { method: 'POST', headers: { ...headers, authorization: `Bearer ${t.host.token}`, origin: 'http://evil.example' }, body })).status).toBe(403);
    // Bearer is accepted on /mcp only
    expect((await fetch(`${t.host.url}/api/workflows`, { headers: { authorization: `Bearer ${t.host.token}` } })).status).toBe(401);
    expect((await fetch(`${t.host.url}/mcp`, { headers: { 'x-fengyu-token': t.host.token } })).status).toBe(405);
  });

  it("serves another owner only that owner's workflows", async () => {
    const bob = (await t.api('POST', '/api/owners', { name: 'mcp-bob' })).body.token as string;
    const client = await httpClient({ 'x-fengyu-token': bob });
    expect((await client.listTools()).tools).toEqual([]);
    await expect(client.callTool({ name: 'wf_echo_me', arguments: { text: 'x' } })).rejects.toThrow(/Unknown tool/);
    await client.close();
  });

  it('refuses a bad mcp setting with a clear 400 and keeps the old one', async () => {
    const def = (await t.api('POST', '/api/workflows', { name: 'Bad setting', inputSchema: schema, plan: echo })).body;
    const res = await t.api('PUT', `/api/workflows/${def.id}`, { revision: def.revision, mcp: { enabled: 'yes', permissionMode: 'root', extra: 1 } });
    expect(res.status).toBe(400);
    expect(res.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual(['mcp.enabled', 'mcp.extra', 'mcp.permissionMode']);
    expect((await t.api('GET', `/api/workflows/${def.id}`)).body.mcp).toEqual({ enabled: false, permissionMode: 'ask' });
  });
});

describe('fengyu mcp (stdio bridge)', () => {
  it('names this host by absolute paths for clients that spawn a command, never npx', async () => {
    const res = await t.api('GET', '/api/mcp/client');
    expect(res.status).toBe(200);
    expect(res.body.stdio).toEqual({ command: process.execPath, args: [join(root, 'bin/fengyu.mjs'), 'mcp'], env: { FENGYU_HOME: t.home } });
    expect((await t.api('GET', '/api/mcp/client', undefined, { 'x-fengyu-token': 'wrong' })).status).toBe(401);
  });

  it('lists and calls the same tools through the running host, started exactly as the copied configuration says', async () => {
    const launch = (await t.api('GET', '/api/mcp/client')).body.stdio as { command: string; args: string[]; env: Record<string, string> };
    const client = new Client({ name: 'stdio-test', version: '1' });
    // from another working directory, as a desktop client starts it
    await client.connect(new StdioClientTransport({ ...launch, cwd: tmpdir(), env: { ...(process.env as Record<string, string>), ...launch.env }, stderr: 'pipe' }));
    expect((await client.listTools()).tools.map((x) => x.name)).toContain('wf_echo_me');
    const res = await client.callTool({ name: 'wf_echo_me', arguments: { text: 'over stdio' } });
    expect(res.structuredContent).toMatchObject({ echoed: 'over stdio' });
    await client.close();
  }, 90_000);
});
