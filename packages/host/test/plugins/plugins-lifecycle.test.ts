import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkEntry, DEFAULT_LIMITS, extractPackage } from '../../src/plugins/package-reader';
import { startTestHost, type TestHost } from '../support/host';
import { MINIMAL_MANIFEST, packProbe, tempDir, zipEntries } from './helpers';

const hosts: TestHost[] = [];
afterAll(async () => {
  await Promise.all(hosts.map((h) => h.close()));
});

describe('package reader limits', () => {
  it('refuses too many entries, duplicates and oversized declared entries', async () => {
    const dir = tempDir();
    const many = await zipEntries(Array.from({ length: 12 }, (_, i) => ({ name: `f${i}.txt`, data: 'x' })));
    writeFileSync(join(dir, 'many.zip'), many);
    await expect(extractPackage(join(dir, 'many.zip'), join(dir, 'out1'), { ...DEFAULT_LIMITS, maxEntries: 10 })).rejects.toMatchObject({ code: 'package_too_large' });
    const dup = await zipEntries([{ name: 'a.txt', data: '1' }, { name: 'b.txt', data: '2' }], { 'b.txt': 'a.txt' });
    writeFileSync(join(dir, 'dup.zip'), dup);
    await expect(extractPackage(join(dir, 'dup.zip'), join(dir, 'out2'))).rejects.toMatchObject({ code: 'invalid_package' });
    const total = await zipEntries([{ name: 'a.bin', data: Buffer.alloc(600) }, { name: 'b.bin', data: Buffer.alloc(600) }]);
    writeFileSync(join(dir, 'total.zip'), total);
    await expect(extractPackage(join(dir, 'total.zip'), join(dir, 'out3'), { ...DEFAULT_LIMITS, maxTotalBytes: 1000 })).rejects.toMatchObject({ code: 'package_too_large' });
    expect(() => checkEntry({ fileName: 'C:/x', externalFileAttributes: 0, uncompressedSize: 1, compressedSize: 1 }, DEFAULT_LIMITS)).toThrow();
    expect(() => checkEntry({ fileName: 'ok/x.js', externalFileAttributes: 0o100644 << 16, uncompressedSize: 1, compressedSize: 1 }, DEFAULT_LIMITS)).not.toThrow();
  });
});

describe('bundled plugins and plugin hooks', () => {
  it('installs bundled .fyp files at first start, upgrades them, and does not resurrect uninstalled ones', async () => {
    const bundles = tempDir('fengyu-bundles-');
    cpSync(await packProbe(), join(bundles, 'probe.fyp'));
    writeFileSync(join(bundles, 'broken.fyp'), 'not a zip');
    const home = tempDir('fengyu-bundled-home-');
    const first = await startTestHost({ keepHome: home, bundledPluginDirs: [bundles, join(bundles, 'missing')] });
    const list = (await first.api('GET', '/api/plugins')).body as Array<{ id: string; bundled: boolean; version: string }>;
    expect(list).toMatchObject([{ id: 'test.fengyu.probe', bundled: true, version: '1.0.0' }]);
    await first.close();

    cpSync(await packProbe({ version: '2.0.0' }), join(bundles, 'probe.fyp'));
    const second = await startTestHost({ keepHome: home, bundledPluginDirs: [bundles] });
    expect(((await second.api('GET', '/api/plugins')).body as Array<{ version: string }>)[0]?.version).toBe('2.0.0');
    expect((await second.api('DELETE', '/api/plugins/test.fengyu.probe')).status).toBe(200);
    await second.close();

    const third = await startTestHost({ keepHome: home, bundledPluginDirs: [bundles] });
    hosts.push(third);
    expect((await third.api('GET', '/api/plugins')).body).toEqual([]);
  });

  it('validates hooks/hooks.json at install, reports it, and hands it to the guard only when trusted', async () => {
    const t = await startTestHost();
    hosts.push(t);
    const hooks = { hooks: { PreToolUse: [{ matcher: 'probe_*', hooks: [{ type: 'command', command: 'exit 0' }] }] } };
    const manifest = JSON.stringify({ ...MINIMAL_MANIFEST, hooks: 'hooks/hooks.json' });
    const good = await zipEntries([{ name: 'manifest.json', data: manifest }, { name: 'worker.js', data: '' }, { name: 'hooks/hooks.json', data: JSON.stringify(hooks) }]);
    const upload = async (buf: Buffer) => {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(buf)]), 'p.fyp');
      const res = await fetch(`${t.host.url}/api/plugins`, { method: 'POST', headers: { 'x-fengyu-token': t.host.token }, body: form });
      return { status: res.status, body: (await res.json()) as any };
    };
    const bad = await zipEntries([{ name: 'manifest.json', data: manifest }, { name: 'worker.js', data: '' }, { name: 'hooks/hooks.json', data: JSON.stringify({ hooks: { Nope: [] } }) }]);
    const refused = await upload(bad);
    expect(refused.status).toBe(400);
    const notJson = await zipEntries([{ name: 'manifest.json', data: manifest }, { name: 'worker.js', data: '' }, { name: 'hooks/hooks.json', data: '{' }]);
    expect((await upload(notJson)).body.error.code).toBe('invalid_plugin_hooks');
    const missing = await zipEntries([{ name: 'manifest.json', data: manifest }, { name: 'worker.js', data: '' }]);
    expect((await upload(missing)).body.error.details[0].code).toBe('manifest_file_missing');

    const ok = await upload(good);
    expect(ok.status, JSON.stringify(ok.body)).toBe(201);
    expect(ok.body.hooks).toEqual({ present: true, trusted: false });
    const domain = (t.host.ctx as { plugins?: { service: { listHookSources(): Promise<unknown[]> } } }).plugins;
    expect(await domain?.service.listHookSources()).toMatchObject([{ pluginId: 'test.fengyu.tiny', hooksJson: hooks }]);
    expect((await t.api('POST', '/api/plugin-hooks/test.fengyu.tiny/trust')).status).toBe(200);
    expect(((await t.api('GET', '/api/plugins')).body as any[])[0].hooks).toEqual({ present: true, trusted: true });
    await t.api('POST', '/api/plugins/test.fengyu.tiny/disable');
    expect(await domain?.service.listHookSources()).toEqual([]);
  });

  it('hands the guard the hooks of the plugins as installed now: enable, upgrade and uninstall are seen on the next call', async () => {
    const t = await startTestHost();
    hosts.push(t);
    const domain = (t.host.ctx as { plugins?: { hooks: { trustedHooks(): Promise<Array<{ pluginId: string; hooks: Array<{ matcher?: string }> }>> } } }).plugins;
    const matchers = async () => (await domain?.hooks.trustedHooks())?.flatMap((s) => s.hooks.map((h) => `${s.pluginId}:${h.matcher}`));
    const pack = (version: string, matcher: string) =>
      zipEntries([
        { name: 'manifest.json', data: JSON.stringify({ ...MINIMAL_MANIFEST, version, hooks: 'hooks/hooks.json' }) },
        { name: 'worker.js', data: '' },
        { name: 'hooks/hooks.json', data: JSON.stringify({ hooks: { PreToolUse: [{ matcher, hooks: [{ type: 'command', command: 'exit 0' }] }] } }) },
      ]);
    const upload = async (buf: Buffer) => {
      const form = new FormData();
      form.append('file', new Blob([new Uint8Array(buf)]), 'p.fyp');
      const res = await fetch(`${t.host.url}/api/plugins`, { method: 'POST', headers: { 'x-fengyu-token': t.host.token }, body: form });
      expect(res.status).toBeLessThan(300);
    };
    expect(await matchers()).toEqual([]);
    await upload(await pack('1.0.0', 'tiny_first'));
    expect(await matchers()).toEqual(['test.fengyu.tiny:tiny_first']);
    expect(await matchers()).toEqual(['test.fengyu.tiny:tiny_first']);
    await t.api('POST', '/api/plugins/test.fengyu.tiny/disable');
    expect(await matchers()).toEqual([]);
    await t.api('POST', '/api/plugins/test.fengyu.tiny/enable');
    expect(await matchers()).toEqual(['test.fengyu.tiny:tiny_first']);
    await upload(await pack('1.1.0', 'tiny_second'));
    expect(await matchers()).toEqual(['test.fengyu.tiny:tiny_second']);
    expect((await t.api('DELETE', '/api/plugins/test.fengyu.tiny')).status).toBe(200);
    expect(await matchers()).toEqual([]);
  });
});


describe('installPackage (no HTTP, no running host)', () => {
  it('installs into a home that a host then serves', async () => {
    const { installPackage } = await import('../../src/plugins/install-offline');
    const home = tempDir('fengyu-offline-');
    const installed = await installPackage({ home, file: await packProbe() });
    expect(installed).toMatchObject({ id: 'test.fengyu.probe', version: '1.0.0', enabled: true });
    await expect(installPackage({ home, file: await packProbe() })).rejects.toMatchObject({ code: 'plugin_version_not_higher' });
    const t = await startTestHost({ keepHome: home });
    hosts.push(t);
    expect(((await t.api('GET', '/api/agent/tools')).body as Array<{ name: string }>).some((x) => x.name === 'probe_echo')).toBe(true);
  });
});

describe('the example plugin (examples/hello-plugin, built with the SDK)', () => {
  it('packs, installs over HTTP and runs in a workflow with an upload and a shared folder', async () => {
    const { packPlugin } = await import('@fengyu/plugin-sdk/pack');
    const out = join(tempDir('fengyu-hello-'), 'hello.fyp');
    const { manifest } = await packPlugin(join(import.meta.dirname, '../../../../examples/hello-plugin'), out);
    expect(Object.keys(manifest.rpc.methods).sort()).toEqual(['count_lines', 'greet', 'write_note']);
    const t = await startTestHost({ sandbox: 'auto' });
    hosts.push(t);
    const post = async (path: string, data: Uint8Array<ArrayBuffer>, name: string) => {
      const form = new FormData();
      form.append('file', new Blob([data]), name);
      const res = await fetch(`${t.host.url}${path}`, { method: 'POST', headers: { 'x-fengyu-token': t.host.token }, body: form });
      return (await res.json()) as any;
    };
    expect((await post('/api/plugins', new Uint8Array(readFileSync(out)), 'hello.fyp')).supportsAi).toBe(true);
    const ref = await post('/api/files', new TextEncoder().encode('one\ntwo\nthree\n'), 'notes.txt');
    const started = await t.api('POST', '/api/agent/run', {
      workflow: {
        steps: [
          { id: 'count', tool: 'hello_count_lines', arguments: { filePath: '@file:notes' } },
          { id: 'note', tool: 'hello_write_note', dependsOn: ['count'], arguments: { directory: '@file:out', fileName: 'lines.txt', text: 'lines: {{node.count.result.lines}}' } },
        ],
      },
      files: [{ name: 'notes', refs: [ref.id] }, { name: 'out', createSharedDirectory: true }],
      config: { planApproval: false, permissionMode: 'full-access' },
    });
    const runId = started.body.runId as string;
    const events = await t.stream(runId);
    expect(events.at(-1)?.type).toBe('complete');
    expect(events.some((e) => e.type === 'tool' && e.data.name === 'hello_count_lines')).toBe(true);
    const run = (await t.api('GET', `/api/agent/runs/${runId}`)).body as { executions: Array<{ stepId: string; result: any }> };
    expect(run.executions.find((e) => e.stepId === 'count')?.result).toEqual({ lines: 3, file: { name: 'notes.txt', bytes: 14 } });
    const written = run.executions.find((e) => e.stepId === 'note')?.result.path as string;
    expect(readFileSync(written, 'utf8')).toBe('lines: 3');
  });
});
