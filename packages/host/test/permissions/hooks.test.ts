import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGuard, type Guard } from '../../src/permissions/guard';
import { type HookConfig, parsePluginHooks } from '../../src/permissions/hook-config';
import { HookRunner } from '../../src/permissions/hooks';
import { PluginHookTrustRepository } from '../../src/permissions/trust.repository';
import type { PluginHookSet, ToolCall } from '../../src/permissions/types';
import { migrate, openDatabase } from '../../src/storage/database';
import type { Tool } from '../../src/tools/tool';

const clock = { now: () => Date.now() };
const logger = pino({ level: 'silent' });
let dir: string;
let server: Server;
let url: string;
const received: Array<{ path: string; body: any }> = [];

function tool(name: string, effect: Tool['effect'] = 'write'): Tool {
  return { name, description: name, inputSchema: {}, effect, source: 'plugin', id: `p:${name}`, schemaRevision: '1', idempotent: false, available: true, invoke: async () => null };
}

function call(name: string, args: Record<string, unknown> = {}, effect: Tool['effect'] = 'write'): ToolCall {
  return { tool: tool(name, effect), arguments: args, owner: 'o1', permissionMode: 'approve-for-me', caller: 'runner', runId: 'r1', stepId: 's1' };
}

/** True while the process runs (a zombie, dead but not yet reaped, counts as gone). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

function hook(partial: Partial<HookConfig> & Pick<HookConfig, 'name'>): HookConfig {
  return { event: 'pre_tool_use', matcher: '*', type: 'command', timeoutSeconds: 10, enabled: true, ...partial } as HookConfig;
}

/** A guard over an in-memory settings document and a real (in-memory) trust table. */
async function guardWith(hooks: HookConfig[], permissions = { deny: [], ask: [], allow: [] } as Record<string, string[]>) {
  const database = openDatabase(dir, 'memory');
  await migrate(database.db);
  const trust = new PluginHookTrustRepository(database.db, clock);
  const doc: Record<string, unknown> = { hooks, permissions };
  const settings = { section: async <T,>(_owner: string, name: string) => doc[name] as T };
  const runner = new HookRunner({ logger, clock, env: { PATH: process.env.PATH }, cwd: dir });
  const guard = createGuard({ settings, hooks: runner, trust, logger, clock });
  return { guard, trust, doc, db: database.db, close: () => database.close() };
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'fengyu-hooks-'));
  server = createServer((req: IncomingMessage, res) => {
    let text = '';
    req.on('data', (c) => (text += c));
    req.on('end', () => {
      received.push({ path: req.url ?? '', body: JSON.parse(text || '{}') });
      if (req.url === '/deny') return void res.end(JSON.stringify({ decision: 'deny', reason: 'http says no' }));
      if (req.url === '/ok') return void res.end('');
      if (req.url === '/boom') {
        res.statusCode = 500;
        return void res.end('broken');
      }
      if (req.url === '/slow') return void setTimeout(() => res.end(''), 3000);
      res.end(JSON.stringify({ decision: 'allow' }));
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
  rmSync(dir, { recursive: true, force: true });
});

describe('command hooks (real processes)', () => {
  it('exit 2 denies with the first stderr line as the reason', async () => {
    const g = await guardWith([hook({ name: 'no', command: 'cat >/dev/null; echo "not today" >&2; echo second >&2; exit 2' })]);
    const d = await g.guard.check(call('excel_split'));
    expect(d).toMatchObject({ decision: 'deny', source: 'hook', rule: 'no', reason: 'not today' });
    expect(d.audits?.[0]).toMatchObject({ kind: 'hook', hook: 'no', event: 'pre_tool_use', outcome: 'deny', exitCode: 2 });
    await g.close();
  });

  it('stdout JSON deny denies on any exit code', async () => {
    for (const code of [0, 1, 7]) {
      const g = await guardWith([hook({ name: 'json', command: `echo '{"decision":"deny","reason":"json no ${code}"}'; exit ${code}` })]);
      expect(await g.guard.check(call('excel_split'))).toMatchObject({ decision: 'deny', source: 'hook', reason: `json no ${code}` });
      await g.close();
    }
  });

  it('exit 0 and a JSON allow let the call proceed to the rules and the mode', async () => {
    const g = await guardWith([hook({ name: 'ok', command: 'exit 0' }), hook({ name: 'allow', command: `echo '{"decision":"allow"}'` })], { deny: ['Tool(excel_*)'], ask: [], allow: [] });
    expect(await g.guard.check(call('excel_split'))).toMatchObject({ decision: 'deny', source: 'deny', rule: 'Tool(excel_*)' });
    const d = await g.guard.check(call('email_send'));
    expect(d).toMatchObject({ decision: 'allow', source: 'mode' });
    expect(d.audits?.map((a) => a.outcome)).toEqual(['proceed', 'proceed']);
    await g.close();
  });

  it('a JSON ask asks (deny rules still win)', async () => {
    const g = await guardWith([hook({ name: 'asker', command: `echo '{"decision":"ask","reason":"check this"}'` })]);
    expect(await g.guard.check(call('x'))).toMatchObject({ decision: 'ask', source: 'hook', reason: 'check this' });
    await g.close();
  });

  it('fails open on a crash and on an unknown exit code, recording the failure', async () => {
    const g = await guardWith([hook({ name: 'crash', command: 'kill -9 $$' }), hook({ name: 'three', command: 'echo oops >&2; exit 3' }), hook({ name: 'missing', command: '/nonexistent/hook-binary' })]);
    const d = await g.guard.check(call('x'));
    expect(d).toMatchObject({ decision: 'allow', source: 'mode' });
    expect(d.audits).toHaveLength(3);
    expect(d.audits?.[0]).toMatchObject({ hook: 'crash', outcome: 'failed', reason: expect.stringContaining('SIGKILL') });
    expect(d.audits?.[1]).toMatchObject({ hook: 'three', outcome: 'failed', exitCode: 3, reason: 'exit code 3: oops' });
    expect(d.audits?.[2]).toMatchObject({ hook: 'missing', outcome: 'failed', exitCode: 127 });
    await g.close();
  });

  it('a fail-closed hook that crashes, exits oddly or answers garbage denies the call; the same hooks fail open without the opt-in', async () => {
    const broken = [
      ['crash', 'kill -9 $$', 'SIGKILL'],
      ['three', 'exit 3', 'exit code 3'],
      ['garbage', `echo '{not json'`, 'not JSON'],
      ['unknown', `echo '{"decision":"maybe"}'`, '"maybe" is not one of'],
    ] as const;
    const g = await guardWith([]);
    for (const [name, command, why] of broken) {
      g.doc.hooks = [hook({ name, command, failClosed: true })];
      const d = await g.guard.check(call('x'));
      expect(d, name).toMatchObject({ decision: 'deny', source: 'hook', rule: name, reason: expect.stringContaining(`hook ${name} failed closed:`) });
      expect(d.reason, name).toContain(why);
      expect(d.audits?.[0], name).toMatchObject({ hook: name, outcome: 'failed' });
      g.doc.hooks = [hook({ name, command })];
      expect(await g.guard.check(call('x')), name).toMatchObject({ decision: 'allow', source: 'mode' });
    }
    // a fail-closed hook that answers stays in charge: exit 0 proceeds, JSON without a decision is no verdict
    g.doc.hooks = [hook({ name: 'ok', command: `echo '{"note":"seen"}'`, failClosed: true })];
    expect(await g.guard.check(call('x'))).toMatchObject({ decision: 'allow', source: 'mode' });
    await g.close();
  });

  it('fails open on a timeout and kills the hook', async () => {
    const marker = join(dir, 'timeout-marker');
    const pids = join(dir, 'timeout-pids');
    // the hook's shell and its sleeping child, each with its pid written first
    const g = await guardWith([hook({ name: 'slow', timeoutSeconds: 1, command: `echo $$ > ${pids}; sleep 30 & echo $! >> ${pids}; wait; touch ${marker}` })]);
    const d = await g.guard.check(call('x'));
    expect(d).toMatchObject({ decision: 'allow', source: 'mode' });
    expect(d.audits?.[0]).toMatchObject({ hook: 'slow', outcome: 'timeout' });
    // the check answers once the hook's group is gone: the shell and its child are dead now (no waiting)
    const [shell, child] = readFileSync(pids, 'utf8').trim().split('\n').map(Number);
    expect(shell && child, 'both pids written').toBeTruthy();
    expect(alive(shell as number), 'the hook shell').toBe(false);
    expect(alive(child as number), 'the hook shell\'s child').toBe(false);
    expect(() => readFileSync(marker)).toThrow();
    await g.close();
  });

  it('gets the event envelope as JSON on stdin; the matcher selects tools', async () => {
    const out = join(dir, 'envelope.json');
    const g = await guardWith([hook({ name: 'rec', matcher: 'excel_*|mail', command: `cat > ${out}` })]);
    await g.guard.check(call('other_tool'));
    expect(() => readFileSync(out)).toThrow();
    await g.guard.check(call('excel_split', { sheet: 'A' }));
    const env = JSON.parse(readFileSync(out, 'utf8'));
    expect(env).toMatchObject({ event: 'pre_tool_use', hook: 'rec', tool: { name: 'excel_split', effect: 'write' }, arguments: { sheet: 'A' }, owner: 'o1', runId: 'r1', stepId: 's1' });
    await g.close();
  });

  it('post hooks receive arguments and the result, or the error', async () => {
    const ok = join(dir, 'post-ok.json');
    const bad = join(dir, 'post-bad.json');
    const g = await guardWith([
      hook({ name: 'post', event: 'post_tool_use', command: `cat > ${ok}` }),
      hook({ name: 'postfail', event: 'post_tool_use_failure', command: `cat > ${bad}` }),
    ]);
    const audits = await g.guard.observe?.(call('excel_split', { n: 1 }), { ok: true, result: { files: 3 } });
    expect(audits?.[0]).toMatchObject({ hook: 'post', event: 'post_tool_use', outcome: 'proceed' });
    expect(JSON.parse(readFileSync(ok, 'utf8'))).toMatchObject({ event: 'post_tool_use', arguments: { n: 1 }, result: { files: 3 } });
    await g.guard.observe?.(call('excel_split', { n: 2 }), { ok: false, error: 'disk full' });
    expect(JSON.parse(readFileSync(bad, 'utf8'))).toMatchObject({ event: 'post_tool_use_failure', arguments: { n: 2 }, error: 'disk full' });
    await g.close();
  });

  it('run_complete and run_error hooks observe the end of a run', async () => {
    const out = join(dir, 'run-end.json');
    const g = await guardWith([hook({ name: 'done', event: 'run_complete', command: `cat > ${out}` }), hook({ name: 'err', event: 'run_error', command: 'exit 0' })]);
    const audits = await g.guard.runEnded?.({ runId: 'r9', owner: 'o1', status: 'completed', goal: 'g' });
    expect(audits?.map((a) => a.hook)).toEqual(['done']);
    expect(JSON.parse(readFileSync(out, 'utf8'))).toMatchObject({ event: 'run_complete', runId: 'r9', run: { status: 'completed', goal: 'g' } });
    expect((await g.guard.runEnded?.({ runId: 'r9', owner: 'o1', status: 'failed' }))?.map((a) => a.hook)).toEqual(['err']);
    await g.close();
  });

  it('disabled hooks do not run', async () => {
    const g = await guardWith([hook({ name: 'off', enabled: false, command: 'exit 2' })]);
    expect(await g.guard.check(call('x'))).toMatchObject({ decision: 'allow', source: 'mode' });
    await g.close();
  });
});

describe('http hooks (a real local server)', () => {
  it('denies by JSON body, proceeds on an empty 200, fails open on 500 and on timeout', async () => {
    received.length = 0;
    const local = { allowPrivateNetwork: true };
    const g = await guardWith([hook({ name: 'h-deny', type: 'http', url: `${url}/deny`, matcher: 'danger_*', ...local }), hook({ name: 'h-ok', type: 'http', url: `${url}/ok`, ...local }), hook({ name: 'h-boom', type: 'http', url: `${url}/boom`, ...local }), hook({ name: 'h-slow', type: 'http', url: `${url}/slow`, timeoutSeconds: 1, ...local })]);
    expect(await g.guard.check(call('danger_zone', { a: 1 }))).toMatchObject({ decision: 'deny', source: 'hook', rule: 'h-deny', reason: 'http says no' });
    expect(received[0]).toMatchObject({ path: '/deny', body: { event: 'pre_tool_use', tool: { name: 'danger_zone' }, arguments: { a: 1 } } });
    const d = await g.guard.check(call('safe'));
    expect(d).toMatchObject({ decision: 'allow', source: 'mode' });
    expect(d.audits?.map((a) => [a.hook, a.outcome])).toEqual([['h-ok', 'proceed'], ['h-boom', 'failed'], ['h-slow', 'timeout']]);
    await g.close();
  });

  it('a fail-closed http hook denies on a 500 and on a timeout', async () => {
    const g = await guardWith([hook({ name: 'boom', type: 'http', url: `${url}/boom`, allowPrivateNetwork: true, failClosed: true })]);
    expect(await g.guard.check(call('x'))).toMatchObject({ decision: 'deny', source: 'hook', reason: 'hook boom failed closed: HTTP 500' });
    g.doc.hooks = [hook({ name: 'slow', type: 'http', url: `${url}/slow`, allowPrivateNetwork: true, timeoutSeconds: 1, failClosed: true })];
    expect(await g.guard.check(call('x'))).toMatchObject({ decision: 'deny', source: 'hook', reason: 'hook slow failed closed: timed out after 1 s' });
    await g.close();
  });

  it('goes through the web_fetch address policy: a private address without the opt-in is never contacted', async () => {
    received.length = 0;
    const port = new URL(url).port;
    const targets = [`${url}/deny`, `http://localhost:${port}/deny`, `http://[::ffff:127.0.0.1]:${port}/deny`, `http://[::ffff:0:127.0.0.1]:${port}/deny`, `http://2130706433:${port}/deny`, `http://169.254.169.254/latest/meta-data/`];
    const g = await guardWith(targets.map((u, i) => hook({ name: `h${i}`, type: 'http', url: u })));
    const d = await g.guard.check(call('danger_zone'));
    expect(d).toMatchObject({ decision: 'allow', source: 'mode' });
    expect(d.audits?.map((a) => a.outcome)).toEqual(targets.map(() => 'failed'));
    for (const a of d.audits ?? []) expect(a.reason).toMatch(/refused|loopback|private|link-local|metadata|blocked/i);
    expect(received).toEqual([]);
    await g.close();
  });

  it('a plugin hooks file cannot opt itself into private addresses', () => {
    const [h] = parsePluginHooks('p', [{ name: 'a', event: 'pre_tool_use', type: 'http', url: 'http://127.0.0.1:9/x', allowPrivateNetwork: true }]);
    expect(h?.allowPrivateNetwork).toBeUndefined();
  });
});

describe('plugin hooks', () => {
  it('run only while trusted, in the plugin root with FENGYU_PLUGIN_ROOT/DATA, named plugin/<id>/<name>', async () => {
    const root = join(dir, 'plugin-root');
    const data = join(dir, 'plugin-data');
    mkdirSync(root, { recursive: true });
    mkdirSync(data, { recursive: true });
    const hooks = parsePluginHooks('acme.guard', {
      hooks: { PreToolUse: [{ matcher: 'excel_*', hooks: [{ type: 'command', command: 'pwd > "$FENGYU_PLUGIN_DATA/seen"; echo "$FENGYU_PLUGIN_ROOT" >> "$FENGYU_PLUGIN_DATA/seen"; echo plugin says no >&2; exit 2', timeout: 5 }] }] },
    });
    const set: PluginHookSet = { pluginId: 'acme.guard', root, dataDir: data, hooks };
    const g = await guardWith([]);
    g.guard.usePluginHooks?.({ trustedHooks: async () => [set] });
    expect(await g.guard.check(call('excel_split'))).toMatchObject({ decision: 'allow', source: 'mode' });
    // Only an installed plugin can be trusted.
    await expect(g.trust.trust('acme.guard', 'o1')).rejects.toMatchObject({ code: 'plugin_not_found' });
    writeFileSync(join(root, 'hooks.json'), 'v1');
    const row = { id: 'acme.guard', name: 'acme', version: '1.0.0', manifest: '{}', root, installed_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z' };
    await g.db.insertInto('plugins').values(row).execute();
    // Trust is per owner: another owner's trust does not run the hooks for o1.
    await g.trust.trust('acme.guard', 'o2');
    expect(await g.guard.check(call('excel_split'))).toMatchObject({ decision: 'allow', source: 'mode' });
    await g.trust.trust('acme.guard', 'o1');
    const d = await g.guard.check(call('excel_split'));
    expect(d).toMatchObject({ decision: 'deny', source: 'hook', rule: 'plugin/acme.guard/pre_tool_use-1-1', reason: 'plugin says no' });
    expect(readFileSync(join(data, 'seen'), 'utf8').trim().split('\n')).toEqual([root, root]);
    await g.trust.untrust('acme.guard', 'o1');
    expect(await g.guard.check(call('excel_split'))).toMatchObject({ decision: 'allow', source: 'mode' });
    // Trust is bound to the installed package: an upgrade (changed files) voids it.
    await g.trust.trust('acme.guard', 'o1');
    expect((await g.guard.check(call('excel_split'))).decision).toBe('deny');
    writeFileSync(join(root, 'hooks.json'), 'v2');
    await g.db.updateTable('plugins').set({ version: '1.0.1', updated_at: '2026-01-02T00:00:00Z' }).where('id', '=', 'acme.guard').execute();
    expect(await g.guard.check(call('excel_split'))).toMatchObject({ decision: 'allow', source: 'mode' });
    expect((await g.trust.list('o1'))[0]).toMatchObject({ pluginId: 'acme.guard', current: false });
    // A reinstall (new install time, same files) voids it too.
    await g.trust.trust('acme.guard', 'o1');
    expect((await g.guard.check(call('excel_split'))).decision).toBe('deny');
    await g.db.updateTable('plugins').set({ installed_at: '2026-01-03T00:00:00Z', updated_at: '2026-01-03T00:00:00Z' }).where('id', '=', 'acme.guard').execute();
    expect(await g.guard.check(call('excel_split'))).toMatchObject({ decision: 'allow', source: 'mode' });
    await g.close();
  });

  it('parses grok-shaped and flat hook files and rejects bad ones', () => {
    const grok = parsePluginHooks('p', { hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [{ type: 'command', command: 'x', timeout: 9000 }] }], PostToolUse: [{ hooks: [{ command: 'y' }] }] } });
    expect(grok).toMatchObject([{ event: 'pre_tool_use', matcher: 'Bash', command: 'x', timeoutSeconds: 600 }, { event: 'post_tool_use', matcher: '*', command: 'y', type: 'command' }]);
    const flat = parsePluginHooks('p', [{ name: 'a', event: 'run_error', type: 'http', url: 'http://127.0.0.1:9/x' }]);
    expect(flat).toMatchObject([{ name: 'a', event: 'run_error', type: 'http', timeoutSeconds: 30, enabled: true, matcher: '*' }]);
    expect(parsePluginHooks('p', { hooks: [{ name: 'b', event: 'pre_tool_use', type: 'command', command: 'z' }] })).toHaveLength(1);
    expect(() => parsePluginHooks('p', { hooks: { SessionStart: [] } })).toThrow(/invalid_plugin_hooks/);
    expect(() => parsePluginHooks('p', [{ name: 'a', event: 'pre_tool_use', type: 'command' }])).toThrow();
    expect(() => parsePluginHooks('p', [{ name: 'a', event: 'pre_tool_use', type: 'http', url: 'file:///etc/passwd' }])).toThrow();
    expect(() => parsePluginHooks('p', 'nonsense')).toThrow();
    expect(() => parsePluginHooks('p', [{ name: 'a', event: 'run_error', type: 'command', command: 'x' }, { name: 'a', event: 'run_error', type: 'command', command: 'y' }])).toThrow();
  });
});

describe('hook runner', () => {
  it('does not pass the host token to hooks', async () => {
    const out = join(dir, 'env.txt');
    writeFileSync(out, '');
    const runner = new HookRunner({ logger, clock, env: { PATH: process.env.PATH, FENGYU_TOKEN: 'secret-token-value' }, cwd: dir });
    await runner.run({ name: 'env', hook: hook({ name: 'env', command: `env > ${out}` }) }, {});
    const text = readFileSync(out, 'utf8');
    expect(text).not.toContain('secret-token-value');
    expect(text).toContain('FENGYU_HOOK_EVENT=pre_tool_use');
  });
});

export type { Guard };
