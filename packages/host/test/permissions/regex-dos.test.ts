import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';

/**
 * User-supplied patterns evaluated on the event loop cannot freeze the host: hook matchers
 * (`/…/`) run on a linear-time engine (RE2, re2js) and refuse what it cannot compile when saved;
 * rule globs are matched without a backtracking RegExp. Each case below ran for minutes (or
 * 2^100 steps) on the earlier RegExp-based matching; here the run or the check completes.
 * The long tool name comes from a real stdio MCP server (node -e, no dependencies).
 */

const LONG = `${'a'.repeat(100)}-`;
const SERVER = String.raw`
const name = process.env.TOOL;
let buf = '';
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
process.stdin.on('data', (d) => {
  buf += d;
  let i;
  while ((i = buf.indexOf('\n')) >= 0) {
    const m = JSON.parse(buf.slice(0, i)); buf = buf.slice(i + 1);
    if (m.id === undefined) continue;
    if (m.method === 'initialize') send({ jsonrpc: '2.0', id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'long', version: '1' } } });
    else if (m.method === 'tools/list') send({ jsonrpc: '2.0', id: m.id, result: { tools: [{ name, inputSchema: { type: 'object', properties: {} }, annotations: { readOnlyHint: true } }] } });
    else if (m.method === 'tools/call') send({ jsonrpc: '2.0', id: m.id, result: { content: [{ type: 'text', text: 'called' }] } });
    else send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no' } });
  }
});
`;

let t: TestHost;
beforeAll(async () => {
  t = await startTestHost();
  const saved = await t.api('PATCH', '/api/settings', { mcpServers: { long: { command: process.execPath, args: ['-e', SERVER], env: { TOOL: LONG } } } });
  expect(saved.status, JSON.stringify(saved.body)).toBe(200);
});
afterAll(() => t?.close());

async function runTool(tool: string): Promise<{ status: string; events: Array<{ type: string }> }> {
  const res = await t.api('POST', '/api/agent/run', { goal: 'g', config: { planApproval: false, permissionMode: 'full-access' }, workflow: { steps: [{ id: 's', tool, arguments: {} }] } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const frames = await t.stream(res.body.runId as string);
  const run = (await t.api('GET', `/api/agent/runs/${res.body.runId}`)).body;
  return { status: run.status, events: frames.map((f) => ({ type: f.type })) };
}

describe('hook matchers', () => {
  it('refuses, when saved, a pattern the linear-time engine cannot run (backreference, lookaround), naming RE2', async () => {
    for (const matcher of ['/(a)\\1/', '/(?=a)a/', '/(?<!b)a/']) {
      const res = await t.api('PATCH', '/api/settings', { hooks: [{ name: 'h', event: 'pre_tool_use', matcher, type: 'command', command: 'true' }] });
      expect(res.status).toBe(400);
      expect(JSON.stringify(res.body.error.details)).toContain('RE2');
    }
  });

  it('a catastrophic-backtracking matcher against a long tool name does not stall the host', async () => {
    const hooks = ['/(a+)+$/', '/^(a|a)*$/', '/^(a|aa)+$/'].map((matcher, i) => ({ name: `h${i}`, event: 'pre_tool_use', matcher, type: 'command', command: 'true' }));
    hooks.push({ name: 'hit', event: 'pre_tool_use', matcher: '/^long__a{100}-$/', type: 'command', command: `touch ${t.home}/hook-hit` });
    expect((await t.api('PATCH', '/api/settings', { hooks })).status).toBe(200);
    const r = await runTool(`long__${LONG}`);
    expect(r.status).toBe('completed');
    // the matchers were evaluated against that name: the exact one selected its hook
    expect(existsSync(join(t.home, 'hook-hit'))).toBe(true);
    expect((await t.api('GET', '/api/health')).status).toBe(200);
    await t.api('PATCH', '/api/settings', { hooks: [] });
  });
});

describe('rule globs', () => {
  it('a glob with many stars against a long command or tool name is answered', async () => {
    const check = (body: unknown) => t.api('POST', '/api/permissions/check', body);
    const cmd = await check({ tool: 'execute_command', arguments: { command: 'a'.repeat(3000) }, rules: { allow: ['Command(*a*a*a*a*a*a*a*a*a*a*b)'] } });
    expect(cmd.status).toBe(200);
    expect(cmd.body.decision).not.toBe('allow');
    const tool = await check({ tool: `long__${LONG}`, arguments: {}, rules: { deny: ['Tool(*a*a*a*a*a*a*a*a*a*a*b)'], allow: ['Tool(long__*-)'] } });
    expect(tool.body).toMatchObject({ decision: 'allow', rule: 'Tool(long__*-)' });
  });
});
