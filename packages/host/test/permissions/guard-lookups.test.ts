import { cpSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { packPlugin } from '@fengyu/plugin-sdk/pack';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuard } from '../../src/permissions/guard';
import { type HookConfig, HooksSectionSchema } from '../../src/permissions/hook-config';
import { HookRunner } from '../../src/permissions/hooks';
import { PermissionsSectionSchema } from '../../src/permissions/permissions.domain';
import { PluginHookTrustRepository } from '../../src/permissions/trust.repository';
import type { PluginHookProvider, PluginHookSet, ToolCall } from '../../src/permissions/types';
import { SettingsStore } from '../../src/settings/settings.store';
import { migrate, openDatabase } from '../../src/storage/database';
import type { Tool } from '../../src/tools/tool';
import { FIXTURE, tempDir } from '../plugins/helpers';
import { startTestHost, type TestHost } from '../support/host';

/**
 * The guard answers a call with no hook to run without looking anything up (the owner's settings
 * and the plugins' hook sets are at hand), and a rule or hook added while the host runs applies
 * to the next call, a removed one stops applying: user rules and hooks (settings), plugin hooks
 * (install, trust, disable, enable, uninstall).
 */

const clock = { now: () => Date.now() };
const logger = pino({ level: 'silent' });

describe('the guard with nothing to look up', () => {
  it('asks the settings and the plugin hooks once, then answers from what is at hand until they change', async () => {
    const dir = tempDir('fengyu-guard-lookups-');
    const database = openDatabase(dir, 'memory');
    await migrate(database.db);
    const store = new SettingsStore(database.db, clock);
    store.registerSection('permissions', { schema: PermissionsSectionSchema, defaultValue: { deny: [], ask: [], allow: [] } });
    store.registerSection('hooks', { schema: HooksSectionSchema, defaultValue: [] as HookConfig[] });
    let lookups = 0;
    const settings = {
      section: <T,>(owner: string, name: string) => {
        lookups++;
        return store.section<T>(owner, name);
      },
      sectionNow: <T,>(owner: string, name: string) => store.sectionNow<T>(owner, name),
    };
    let sets: PluginHookSet[] = [];
    let known = true;
    let providerLookups = 0;
    const provider: PluginHookProvider = {
      trustedHooks: async () => {
        providerLookups++;
        return sets;
      },
      trustedHooksNow: () => (known ? sets : undefined),
    };
    const runner = new HookRunner({ logger, clock, env: { PATH: process.env.PATH }, cwd: dir });
    const guard = createGuard({ settings, hooks: runner, trust: new PluginHookTrustRepository(database.db, clock), logger, clock, pluginHooks: provider });
    const tool: Tool = { name: 'excel_split', description: '', inputSchema: {}, effect: 'write', source: 'plugin', id: 'p:excel_split', schemaRevision: '1', idempotent: false, available: true, invoke: async () => null };
    const call: ToolCall = { tool, arguments: {}, owner: 'o1', permissionMode: 'full-access', caller: 'runner', runId: 'r1', stepId: 's1' };

    expect(await guard.check(call)).toMatchObject({ decision: 'allow', source: 'mode' });
    const first = lookups;
    expect(first).toBeGreaterThan(0);
    for (let i = 0; i < 3; i++) {
      expect(await guard.check(call)).toMatchObject({ decision: 'allow', source: 'mode' });
      expect(await guard.observe?.(call, { ok: true, result: 1 })).toEqual([]);
      expect(await guard.runEnded?.({ runId: 'r1', owner: 'o1', status: 'completed' })).toEqual([]);
    }
    expect(lookups).toBe(first);
    const providerFirst = providerLookups;

    // a deny rule saved now applies to the next call; removed, it stops applying
    await store.patch('o1', { permissions: { deny: ['Tool(excel_*)'] } });
    expect(await guard.check(call)).toMatchObject({ decision: 'deny', source: 'deny', rule: 'Tool(excel_*)' });
    await store.patch('o1', { permissions: { deny: [] } });
    expect(await guard.check(call)).toMatchObject({ decision: 'allow', source: 'mode' });

    // a hook saved now runs on the next call of each event; disabled, it stops running
    const hooks = [
      { name: 'no', event: 'pre_tool_use', type: 'command', command: 'cat >/dev/null; echo nope >&2; exit 2' },
      { name: 'after', event: 'post_tool_use', type: 'command', command: 'cat >/dev/null; exit 0' },
      { name: 'end', event: 'run_complete', type: 'command', command: 'cat >/dev/null; exit 0' },
    ];
    await store.patch('o1', { hooks });
    expect(await guard.check(call)).toMatchObject({ decision: 'deny', source: 'hook', rule: 'no', reason: 'nope' });
    expect(await guard.observe?.(call, { ok: true, result: 1 })).toMatchObject([{ hook: 'after', outcome: 'proceed' }]);
    expect(await guard.runEnded?.({ runId: 'r1', owner: 'o1', status: 'completed' })).toMatchObject([{ hook: 'end', outcome: 'proceed' }]);
    await store.patch('o1', { hooks: hooks.map((h) => ({ ...h, enabled: false })) });
    const withHooks = providerLookups;
    expect(withHooks).toBeGreaterThan(providerFirst); // hooks to run: the plugin sets were looked up too
    expect(await guard.check(call)).toMatchObject({ decision: 'allow', source: 'mode' });
    expect(await guard.observe?.(call, { ok: true, result: 1 })).toEqual([]);
    expect(await guard.runEnded?.({ runId: 'r1', owner: 'o1', status: 'completed' })).toEqual([]);
    expect(providerLookups).toBe(withHooks);

    // plugin hook sets that are not at hand are looked up; a set that is there needs its trust looked up
    known = false;
    expect(await guard.check(call)).toMatchObject({ decision: 'allow' });
    expect(providerLookups).toBe(withHooks + 1);
    known = true;
    sets = [{ pluginId: 'p.one', root: dir, dataDir: dir, hooks: [{ name: 'x', event: 'pre_tool_use', matcher: '*', type: 'command', command: 'exit 2', timeoutSeconds: 5, enabled: true }] }];
    expect(await guard.check(call)).toMatchObject({ decision: 'allow', source: 'mode' }); // not trusted: does not run
    expect(providerLookups).toBe(withHooks + 2);
    await database.close();
  });

  it('a failing provider on the path with lookups still fails open, as before', async () => {
    const dir = tempDir('fengyu-guard-lookups-');
    const database = openDatabase(dir, 'memory');
    await migrate(database.db);
    const store = new SettingsStore(database.db, clock);
    store.registerSection('hooks', { schema: HooksSectionSchema, defaultValue: [] as HookConfig[] });
    const guard = createGuard({
      settings: store,
      hooks: new HookRunner({ logger, clock, env: {}, cwd: dir }),
      trust: new PluginHookTrustRepository(database.db, clock),
      logger,
      clock,
      pluginHooks: { trustedHooks: async () => Promise.reject(new Error('down')), trustedHooksNow: () => undefined },
    });
    const tool: Tool = { name: 'excel_split', description: '', inputSchema: {}, effect: 'write', source: 'plugin', id: 'p:excel_split', schemaRevision: '1', idempotent: false, available: true, invoke: async () => null };
    const call: ToolCall = { tool, arguments: {}, owner: 'o1', permissionMode: 'full-access', caller: 'runner' };
    expect(await guard.check(call)).toMatchObject({ decision: 'allow', source: 'mode' });
    expect(await guard.check(call)).toMatchObject({ decision: 'allow', source: 'mode' });
    await database.close();
  });
});

const PROBE = 'test.fengyu.probe';
let t: TestHost;

async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !ok(); i++) await new Promise((r) => setTimeout(r, 20));
  expect(ok()).toBe(true);
}

async function runEcho(): Promise<{ status: string; hooks: string[] }> {
  const res = await t.api('POST', '/api/agent/run', { goal: 'hooked', config: { planApproval: false, permissionMode: 'full-access' }, workflow: { steps: [{ id: 'e', tool: 'echo', arguments: { value: 1 } }] } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const events = await t.stream(res.body.runId);
  return {
    status: events.find((e) => e.type === 'step_complete')?.data.status,
    hooks: events.filter((e) => e.type === 'audit' && e.data.kind === 'hook').map((e) => `${e.data.event}:${e.data.hook}`),
  };
}

beforeAll(async () => {
  t = await startTestHost();
});
afterAll(async () => t.close());

describe('rules and hooks changed while the host runs (real host)', () => {
  it('a user rule or hook applies to the next run once saved and stops once removed', async () => {
    expect(await runEcho()).toEqual({ status: 'done', hooks: [] });
    expect(await runEcho()).toEqual({ status: 'done', hooks: [] });

    expect((await t.api('PATCH', '/api/settings', { permissions: { deny: ['Tool(echo)'] } })).status).toBe(200);
    expect((await runEcho()).status).toBe('failed');
    expect((await t.api('PATCH', '/api/settings', { permissions: { deny: [] } })).status).toBe(200);
    expect(await runEcho()).toEqual({ status: 'done', hooks: [] });

    // run_complete hooks run after the run's stream has ended: this one leaves a line in a file
    const ended = join(tempDir('fengyu-run-ended-'), 'ended.log');
    const hooks = [
      { name: 'seen', event: 'post_tool_use', matcher: 'echo', type: 'command', command: 'cat >/dev/null; exit 0' },
      { name: 'ended', event: 'run_complete', type: 'command', command: `cat >/dev/null; echo ran >> '${ended}'` },
    ];
    expect((await t.api('PATCH', '/api/settings', { hooks })).status).toBe(200);
    expect(await runEcho()).toEqual({ status: 'done', hooks: ['post_tool_use:seen'] });
    await until(() => existsSync(ended));
    const deny = { name: 'no', event: 'pre_tool_use', matcher: 'echo', type: 'command', command: 'cat >/dev/null; echo stop >&2; exit 2' };
    expect((await t.api('PATCH', '/api/settings', { hooks: [deny] })).status).toBe(200);
    expect(await runEcho()).toMatchObject({ status: 'failed', hooks: ['pre_tool_use:no'] });
    expect((await t.api('PATCH', '/api/settings', { hooks: [] })).status).toBe(200);
    expect(await runEcho()).toEqual({ status: 'done', hooks: [] });
    expect(readFileSync(ended, 'utf8')).toBe('ran\n'); // one run ended while the hook was saved
  });

  it('a plugin with hooks installed while the host runs: its trusted hook runs on the next run, and stops when disabled or uninstalled', async () => {
    expect(await runEcho()).toEqual({ status: 'done', hooks: [] });
    const dir = tempDir('fengyu-hooked-probe-');
    cpSync(FIXTURE, dir, { recursive: true });
    mkdirSync(join(dir, 'hooks'), { recursive: true });
    writeFileSync(join(dir, 'hooks', 'hooks.json'), JSON.stringify({ hooks: { PreToolUse: [{ matcher: 'echo', hooks: [{ type: 'command', command: 'cat >/dev/null; echo "probe says no" >&2; exit 2', timeout: 10 }] }] } }));
    const file = (await packPlugin(dir, join(dir, 'out.fyp'))).file;
    const form = new FormData();
    form.append('file', new Blob([new Uint8Array(readFileSync(file))]), 'plugin.fyp');
    const res = await fetch(`${t.host.url}/api/plugins`, { method: 'POST', headers: { 'x-fengyu-token': t.host.token }, body: form });
    expect(res.status).toBeLessThan(300);
    expect(await runEcho()).toEqual({ status: 'done', hooks: [] }); // installed, not trusted
    expect((await t.api('POST', `/api/plugin-hooks/${PROBE}/trust`)).status).toBe(200);
    const hook = `pre_tool_use:plugin/${PROBE}/pre_tool_use-1-1`;
    expect(await runEcho()).toEqual({ status: 'failed', hooks: [hook] });
    expect((await t.api('POST', `/api/plugins/${PROBE}/disable`)).status).toBe(200);
    expect(await runEcho()).toEqual({ status: 'done', hooks: [] });
    expect((await t.api('POST', `/api/plugins/${PROBE}/enable`)).status).toBe(200);
    expect(await runEcho()).toEqual({ status: 'failed', hooks: [hook] });
    expect((await t.api('DELETE', `/api/plugins/${PROBE}`)).status).toBeLessThan(300);
    expect(await runEcho()).toEqual({ status: 'done', hooks: [] });
  });
});
