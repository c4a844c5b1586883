import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { reservedToolFamily } from '@fengyu/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';
import { MINIMAL_MANIFEST, zipEntries } from './helpers';

/**
 * A plugin or MCP server may not name a tool inside a built-in family (`run_workflow_*`,
 * `task_*`, `web_*`, `browser_*`, `memory_*`, `execute_command`, `run_current_flow`): the
 * install or upgrade is refused before anything is written, with a message naming the tool.
 */

let t: TestHost;
beforeAll(async () => {
  t = await startTestHost();
});
afterAll(async () => t.close());

const ID = MINIMAL_MANIFEST.id;
const WORKER = 'process.stdin.on("data", () => {});\n';

async function pkg(toolNames: string[], version = '1.0.0'): Promise<Buffer> {
  const manifest = { ...MINIMAL_MANIFEST, version, aiTools: toolNames.map((name) => ({ name, description: name, method: 'noop', effect: 'read' })) };
  return zipEntries([
    { name: 'manifest.json', data: JSON.stringify(manifest) },
    { name: 'worker.js', data: WORKER },
  ]);
}

async function upload(body: Buffer, lang = 'en') {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(body)]), 'plugin.fyp');
  const res = await fetch(`${t.host.url}/api/plugins`, { method: 'POST', headers: { 'x-fengyu-token': t.host.token, 'accept-language': lang }, body: form });
  return { status: res.status, body: (await res.json()) as any };
}

const catalogNames = async () => ((await t.api('GET', '/api/agent/tools')).body as Array<{ name: string }>).map((x) => x.name);

const RESERVED = ['web_fetch', 'web_scrape', 'WEB_search', 'task_submit', 'task_', 'run_workflow_payroll', 'execute_command', 'Execute_Command', 'browser_navigate', 'browser_steal', 'memory_dump', 'run_current_flow'];

describe('reserved built-in tool names', () => {
  for (const name of RESERVED) {
    it(`refuses a plugin declaring "${name}" and installs nothing`, async () => {
      const en = await upload(await pkg(['tiny_ok', name]));
      expect(en.status, JSON.stringify(en.body)).toBe(400);
      expect(en.body.error.code).toBe('invalid_manifest');
      const problem = en.body.error.details.find((d: { code: string }) => d.code === 'manifest_tool_reserved');
      expect(problem).toMatchObject({ field: 'aiTools[1].name' });
      expect(problem.message).toContain(`"${name}"`);
      expect(problem.message).toContain(reservedToolFamily(name));
      const zh = await upload(await pkg(['tiny_ok', name]), 'zh-CN');
      const zhProblem = zh.body.error.details.find((d: { code: string }) => d.code === 'manifest_tool_reserved');
      expect(zhProblem.message).toContain(`“${name}”`);
      expect(zhProblem.message).toContain('保留名称');
      expect((await t.api('GET', '/api/plugins')).body).toEqual([]);
      expect(existsSync(join(t.home, 'plugins', ID))).toBe(false);
      expect(await catalogNames()).not.toContain('tiny_ok');
    });
  }

  it('installs names that only resemble a family, then refuses an upgrade that adds a reserved one and keeps the installed version', async () => {
    const ok = await upload(await pkg(['tiny_ok', 'webfetch', 'tasks_list', 'my_web_fetch', 'execute_commands']));
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    const up = await upload(await pkg(['tiny_ok', 'web_fetch'], '1.1.0'));
    expect(up.status).toBe(400);
    expect(up.body.error.details.map((d: { code: string }) => d.code)).toEqual(['manifest_tool_reserved']);
    const installed = (await t.api('GET', '/api/plugins')).body as Array<{ id: string; version: string }>;
    expect(installed.map((p) => [p.id, p.version])).toEqual([[ID, '1.0.0']]);
    expect(existsSync(join(t.home, 'plugins', ID, '1.0.0'))).toBe(true);
    expect(existsSync(join(t.home, 'plugins', ID, '1.1.0'))).toBe(false);
    const names = await catalogNames();
    expect(names).toContain('my_web_fetch');
    expect(names.filter((n) => n === 'web_fetch')).toHaveLength(1); // the built-in alone
  });

  it('refuses an MCP server whose qualified tool names fall in a built-in family, in both languages', async () => {
    for (const server of ['web', 'task', 'browser', 'memory', 'run_workflow', 'Web']) {
      const patch = { mcpServers: { [server]: { command: 'mcp-not-installed', args: [] } } };
      const en = await t.api('PATCH', '/api/settings', patch);
      expect(en.status, server).toBe(400);
      const problem = en.body.error.details.find((d: { code: string }) => d.code === 'mcp_server_name_reserved');
      expect(problem).toMatchObject({ field: `mcpServers.${server}` });
      expect(problem.message).toContain(`"${server}"`);
      const zh = await t.api('PATCH', '/api/settings', patch, { 'accept-language': 'zh-CN' });
      expect(zh.body.error.details.find((d: { code: string }) => d.code === 'mcp_server_name_reserved').message).toContain('保留名称');
      expect((await t.api('GET', '/api/settings')).body.mcpServers).toEqual({});
    }
    const fine = await t.api('PATCH', '/api/settings', { mcpServers: { webtools: { command: 'mcp-not-installed', args: [] } } });
    expect(fine.status, JSON.stringify(fine.body)).toBe(200);
  });

  it('every built-in tool of the real catalog is inside the reserved set', async () => {
    const testTools = new Set((await t.tools.source.list('x')).map((x) => x.name));
    const entries = (await t.api('GET', '/api/agent/tools')).body as Array<{ name: string; source: string }>;
    const builtins = entries.filter((e) => e.source === 'builtin' && !testTools.has(e.name)).map((e) => e.name);
    expect(builtins).toEqual(expect.arrayContaining(['execute_command', 'web_fetch', 'task_list']));
    expect(builtins.filter((n) => reservedToolFamily(n) === undefined)).toEqual([]);
  });
});
