import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { isFengYuError } from '@fengyu/protocol';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { extractPackage } from '../../src/plugins/package-reader';
import { CallScope, Stop } from '../../src/tools/call-scope';
import { detectSandbox, type SandboxBackend } from '../../src/plugins/sandbox';
import { type InvokeRequest, WorkerManager, type WorkerTarget } from '../../src/plugins/worker-manager';
import { packProbe, tempDir } from './helpers';

let target: WorkerTarget;
const logger = pino({ level: 'silent' });

beforeAll(async () => {
  const fyp = await packProbe();
  const home = tempDir();
  const root = join(home, 'plugins/test.fengyu.probe/1.0.0');
  await extractPackage(fyp, root);
  const dataDir = join(home, 'plugin-data/test.fengyu.probe');
  mkdirSync(dataDir, { recursive: true });
  target = { pluginId: 'test.fengyu.probe', version: '1.0.0', root, dataDir, worker: 'worker.mjs' };
});

const call = (m: WorkerManager, method: string, params: unknown = {}, extra: Partial<InvokeRequest> = {}) =>
  m.invoke({ target, method, params, toolName: `probe_${method}`, timeoutSeconds: 10, grants: [], ...extra });

async function failure(p: Promise<unknown>): Promise<{ code: string; params: Record<string, unknown> }> {
  try {
    await p;
  } catch (e) {
    if (isFengYuError(e)) return { code: e.code, params: e.params };
    throw e;
  }
  throw new Error('expected a failure');
}

const backends: Array<[string, SandboxBackend]> = [['unsandboxed', detectSandbox('off', process.env)]];
const bwrap = detectSandbox('auto', process.env);
if (bwrap.bwrapPath) backends.push(['bwrap', bwrap]);

describe.each(backends)('worker manager (%s)', (_name, backend) => {
  const managers: WorkerManager[] = [];
  const manager = (o: Partial<ConstructorParameters<typeof WorkerManager>[0]> = {}) => {
    const m = new WorkerManager({ backend, logger, killGraceMs: 300, cancelGraceMs: 300, ...o });
    managers.push(m);
    return m;
  };
  afterAll(async () => {
    await Promise.all(managers.map((m) => m.close()));
  });

  it('keeps one warm worker and forwards progress', async () => {
    const m = manager();
    const a = (await call(m, 'echo', { value: 1 })) as { instance: string; version: string };
    const b = (await call(m, 'echo', { value: 2 })) as { instance: string; value: number };
    expect(a.version).toBe('1.0.0');
    expect(b.value).toBe(2);
    expect(b.instance).toBe(a.instance);
    const progress: unknown[] = [];
    await call(m, 'slow', { ms: 10 }, { onProgress: (p) => progress.push(p) });
    expect(progress).toEqual([{ message: 'started', current: 0, total: 1 }]);
    expect(m.size).toBe(1);
  });

  it('sets FENGYU_PLUGIN_ROOT / FENGYU_PLUGIN_DATA and does not leak the host environment', async () => {
    const hostEnv = { PATH: process.env.PATH, TZ: 'Asia/Shanghai', FENGYU_TEST_SECRET: 'leaked', OPENAI_API_KEY: 'sk-leaked', FENGYU_TOKEN: 'host-token-leaked', AWS_SECRET_ACCESS_KEY: 'x' };
    const env = (await call(manager({ env: hostEnv }), 'env')) as Record<string, unknown> & { keys: string[] };
    expect(env).toMatchObject({ root: target.root, data: target.dataDir, ctxRoot: target.root, cwd: target.root, secret: null });
    const allowed = new Set(['PATH', 'HOME', 'LANG', 'TZ', 'TMPDIR', 'PWD', 'FENGYU_PLUGIN_ROOT', 'FENGYU_PLUGIN_DATA']);
    expect(env.keys.filter((k) => !allowed.has(k))).toEqual([]);
  });

  it('fails a crashing call and starts a fresh worker for the next one', async () => {
    const m = manager();
    const before = (await call(m, 'echo', {})) as { instance: string };
    const f = await failure(call(m, 'crash'));
    expect(f.code).toBe('tool_failed');
    expect(String(f.params.reason)).toContain('code 3');
    const after = (await call(m, 'echo', {})) as { instance: string };
    expect(after.instance).not.toBe(before.instance);
  });

  it('captures worker stderr into the host log, tagged with the plugin', async () => {
    const lines: Array<Record<string, unknown>> = [];
    const sink = { write: (line: string) => void lines.push(JSON.parse(line) as Record<string, unknown>) };
    const m = manager({ logger: pino({ level: 'info' }, sink) });
    await failure(call(m, 'crash'));
    await vi.waitFor(() => expect(lines.find((l) => l.msg === 'about to crash')).toMatchObject({ stream: 'stderr', plugin: 'test.fengyu.probe' }));
  });

  it('times out a hung worker, kills it, and serves the next call from a new one', async () => {
    const m = manager();
    const before = (await call(m, 'echo', {})) as { instance: string };
    const f = await failure(call(m, 'hang', {}, { timeoutSeconds: 1 }));
    expect(f).toMatchObject({ code: 'tool_timeout', params: { seconds: 1 } });
    const after = (await call(m, 'echo', {})) as { instance: string };
    expect(after.instance).not.toBe(before.instance);
  });

  it('forwards cancellation and rejects at once', async () => {
    const m = manager();
    const controller = new AbortController();
    // Cancel once the handler runs (progress arrives), so a slow worker start cannot look like a hang.
    const p = call(m, 'slow', { ms: 60_000 }, { signal: controller.signal, onProgress: () => controller.abort() });
    expect((await failure(p)).code).toBe('tool_cancelled');
    expect(await call(m, 'echo', { value: 'still fine' })).toMatchObject({ value: 'still fine' });
  });

  it("forwards a cancellation told without a signal (a run's call scope), and leaves another run's call alone", async () => {
    const m = manager();
    const run = new Stop();
    const scope = new CallScope(run, 60_000);
    const other = new CallScope(new Stop(), 60_000);
    const p = call(m, 'slow', { ms: 60_000 }, { abort: scope, onProgress: () => run.abort(new Error('cancelled')) });
    expect((await failure(p)).code).toBe('tool_cancelled');
    // a call of another run is not cancelled, and no AbortController was made for either scope
    expect(await call(m, 'echo', { value: 'other run' }, { abort: other })).toMatchObject({ value: 'other run' });
    expect((scope as unknown as { controller?: unknown }).controller).toBeUndefined();
    expect((other as unknown as { controller?: unknown }).controller).toBeUndefined();
    other.dispose();
    // a scope already aborted never reaches the worker
    expect((await failure(call(m, 'echo', {}, { abort: scope }))).code).toBe('tool_cancelled');
  });

  it('ignores garbage on stdout', async () => {
    const m = manager();
    expect(await call(m, 'garbage')).toEqual({ ok: true });
    expect(await call(m, 'noop')).toEqual({});
  });

  it('stops a worker whose output line is too long, without harming the host', async () => {
    const m = manager({ maxLineChars: 64 * 1024 });
    const f = await failure(call(m, 'huge', { chars: 200 * 1024 }));
    expect(f.code).toBe('tool_failed');
    expect(String(f.params.reason)).toContain('exceeded');
    expect(await call(m, 'noop')).toEqual({});
  });

  it('reports worker errors as tool_failed with the worker text', async () => {
    const f = await failure(call(manager(), 'echo', 'not an object'));
    expect(f.code).toBe('tool_failed');
  });

  it('runs 8 calls in flight on one worker', async () => {
    const m = manager();
    const results = await Promise.all(Array.from({ length: 8 }, (_, i) => call(m, 'echo', { value: i })));
    expect(results.map((r) => (r as { value: number }).value)).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(new Set(results.map((r) => (r as { instance: string }).instance)).size).toBe(1);
  });

  it('stops idle workers', async () => {
    const m = manager({ idleMs: 100 });
    await call(m, 'noop');
    expect(m.size).toBe(1);
    await new Promise((r) => setTimeout(r, 400));
    expect(m.size).toBe(0);
  });
});
