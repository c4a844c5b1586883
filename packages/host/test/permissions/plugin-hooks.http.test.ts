import { cpSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { packPlugin } from '@fengyu/plugin-sdk/pack';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';
import { FIXTURE, tempDir } from '../plugins/helpers';

/**
 * A real .fyp with hooks/hooks.json installed over HTTP: its pre_tool_use hook runs only while
 * the plugin is trusted, in the plugin's install dir with FENGYU_PLUGIN_ROOT/DATA, and is named
 * plugin/<id>/<name> in the run's audit events.
 */

const PROBE = 'test.fengyu.probe';
let t: TestHost;

async function packWithHooks(): Promise<string> {
  const dir = tempDir('fengyu-hooked-probe-');
  cpSync(FIXTURE, dir, { recursive: true });
  mkdirSync(join(dir, 'hooks'), { recursive: true });
  const script = 'cat > /dev/null; printf "%s\\n%s\\n" "$PWD" "$FENGYU_PLUGIN_ROOT" > "$FENGYU_PLUGIN_DATA/hook-ran"; echo "probe hook says no" >&2; exit 2';
  writeFileSync(join(dir, 'hooks', 'hooks.json'), JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'echo', hooks: [{ type: 'command', command: script, timeout: 10 }] }] } }));
  return (await packPlugin(dir, join(dir, 'out.fyp'))).file;
}

async function runEcho(): Promise<any[]> {
  const res = await t.api('POST', '/api/agent/run', { goal: 'hooked', config: { planApproval: false, permissionMode: 'full-access' }, workflow: { steps: [{ id: 'e', tool: 'echo', arguments: { value: 1 } }] } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return t.stream(res.body.runId);
}

beforeAll(async () => {
  t = await startTestHost();
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(readFileSync(await packWithHooks()))]), 'plugin.fyp');
  const res = await fetch(`${t.host.url}/api/plugins`, { method: 'POST', headers: { 'x-fengyu-token': t.host.token }, body: form });
  const body = (await res.json()) as any;
  expect(res.status, JSON.stringify(body)).toBeLessThan(300);
  expect(body.hooks).toMatchObject({ present: true, trusted: false });
});
afterAll(async () => t.close());

describe('plugin hooks end to end', () => {
  it('do not run until trusted, deny once trusted, stop after untrust', async () => {
    const before = await runEcho();
    expect(before.find((e) => e.type === 'step_complete')?.data.status).toBe('done');
    expect(before.some((e) => e.type === 'audit' && e.data.kind === 'hook')).toBe(false);

    expect((await t.api('POST', `/api/plugin-hooks/${PROBE}/trust`)).status).toBe(200);
    const trusted = await runEcho();
    const step = trusted.find((e) => e.type === 'step_complete');
    expect(step?.data.status).toBe('failed');
    expect(step?.data.error).toContain('probe hook says no');
    const audit = trusted.find((e) => e.type === 'audit' && e.data.kind === 'hook');
    expect(audit?.data).toMatchObject({ hook: `plugin/${PROBE}/pre_tool_use-1-1`, outcome: 'deny', exitCode: 2, hookType: 'command' });
    const permission = trusted.find((e) => e.type === 'audit' && e.data.kind === 'permission');
    expect(permission?.data).toMatchObject({ decision: 'deny', source: 'hook', rule: `plugin/${PROBE}/pre_tool_use-1-1` });

    const ran = readdirSync(t.home, { recursive: true, encoding: 'utf8' }).find((f) => f.endsWith('hook-ran'));
    expect(ran).toBeDefined();
    const [cwd, root] = readFileSync(join(t.home, ran as string), 'utf8').trim().split('\n');
    expect(cwd).toBe(root);
    expect(root?.startsWith(t.home) || root?.includes(PROBE)).toBe(true);

    const plugin = (await t.api('GET', '/api/plugins')).body;
    const list = Array.isArray(plugin) ? plugin : plugin.plugins;
    expect(list.find((p: any) => p.id === PROBE)?.hooks).toMatchObject({ present: true, trusted: true });

    expect((await t.api('POST', `/api/plugin-hooks/${PROBE}/untrust`)).status).toBe(200);
    const after = await runEcho();
    expect(after.find((e) => e.type === 'step_complete')?.data.status).toBe('done');
  });
});

describe('plugin-hook trust is per owner, and only for installed plugins', () => {
  it('trusting a plugin that is not installed is a 404', async () => {
    const res = await t.api('POST', '/api/plugin-hooks/not.installed.plugin/trust');
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('plugin_not_found');
    expect((await t.api('GET', '/api/plugin-hooks')).body.trusted.map((r: any) => r.pluginId)).not.toContain('not.installed.plugin');
  });

  it("another owner's trust does not run the hooks in the default owner's runs", async () => {
    const other = await t.api('POST', '/api/owners', { name: 'second' });
    expect(other.status).toBe(200);
    const res = await t.api('POST', `/api/plugin-hooks/${PROBE}/trust`, undefined, { 'x-fengyu-token': other.body.token });
    expect(res.status).toBe(200);
    const mine = await runEcho();
    expect(mine.find((e) => e.type === 'step_complete')?.data.status).toBe('done');
    expect((await t.api('GET', '/api/plugin-hooks')).body.trusted).toEqual([]);
    expect((await t.api('GET', '/api/plugin-hooks', undefined, { 'x-fengyu-token': other.body.token })).body.trusted).toMatchObject([{ pluginId: PROBE, current: true }]);
  });
});
