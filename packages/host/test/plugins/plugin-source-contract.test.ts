import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { extractPackage } from '../../src/plugins/package-reader';
import type { InstalledPlugin } from '../../src/plugins/plugin.repository';
import { PluginToolSource, pluginTool } from '../../src/plugins/plugin-tool-source';
import { detectSandbox } from '../../src/plugins/sandbox';
import { WorkerManager } from '../../src/plugins/worker-manager';
import { toolSourceContract } from '../mcp/tool-source-contract';
import { packProbe, tempDir } from './helpers';
import { peekManifest } from '../../src/plugins/package-reader';
import type { PluginManifest } from '@fengyu/protocol';

/** The shared ToolSource contract, run against the plugin source with the real probe plugin. */
toolSourceContract('PluginToolSource (probe plugin, real worker)', {
  owner: 'o',
  make: async () => {
    const fyp = await packProbe();
    const home = tempDir();
    const root = join(home, 'plugins/test.fengyu.probe/1.0.0');
    await extractPackage(fyp, root);
    mkdirSync(join(home, 'plugin-data/test.fengyu.probe'), { recursive: true });
    const manifest = (await peekManifest(fyp)) as PluginManifest;
    const plugin: InstalledPlugin = { id: manifest.id, name: manifest.name, version: manifest.version, description: '', enabled: true, manifest, root, bundled: false, installedAt: '', updatedAt: '' };
    const workers = new WorkerManager({ backend: detectSandbox('auto', process.env), logger: pino({ level: 'silent' }) });
    const source = new PluginToolSource({ plugins: async () => [plugin], workers, dataDirOf: () => join(home, 'plugin-data/test.fengyu.probe'), ownerDataDir: async () => join(home, 'plugin-data/test.fengyu.probe'), defaultTimeoutSeconds: () => 120 });
    return { source, close: () => workers.close() };
  },
  sample: (tool) => (tool.name === 'probe_echo' ? { value: 1 } : tool.name === 'probe_noop' ? {} : undefined),
});

describe('plugin tool schema revisions', () => {
  const make = (inputSchema: Record<string, unknown>, description = 'Echo') => {
    const manifest = {
      id: 'test.rev',
      name: 'Rev',
      version: '1.0.0',
      worker: 'worker.mjs',
      rpc: { methods: { echo: { inputSchema, outputSchema: { type: 'object' } } } },
      aiTools: [{ name: 'rev_echo', description, method: 'echo', effect: 'read' }],
    } as unknown as PluginManifest;
    const plugin: InstalledPlugin = { id: manifest.id, name: manifest.name, version: manifest.version, description: '', enabled: true, manifest, root: '/nonexistent', bundled: false, installedAt: '', updatedAt: '' };
    return pluginTool(plugin, manifest.aiTools![0]!, { plugins: async () => [plugin], workers: {} as WorkerManager, dataDirOf: () => '/nonexistent', ownerDataDir: async () => '/nonexistent', defaultTimeoutSeconds: () => 120 });
  };

  it('keeps the id, and changes schemaRevision exactly when a schema changes', () => {
    const a = make({ type: 'object', properties: { value: { type: 'string' } } });
    const b = make({ type: 'object', properties: { value: { type: 'number' } } });
    const c = make({ properties: { value: { type: 'string' } }, type: 'object' }, 'Echo, reworded');
    expect(a.id).toBe('test.rev:rev_echo');
    expect(b.id).toBe(a.id);
    expect(b.schemaRevision).not.toBe(a.schemaRevision);
    expect(c.schemaRevision).toBe(a.schemaRevision);
  });
});

describe('plugin tool call timeouts', () => {
  const timeoutFor = async (declared: number | undefined, fallback: number) => {
    const manifest = {
      id: 'test.timeout',
      name: 'Timeout',
      version: '1.0.0',
      worker: 'worker.mjs',
      rpc: { methods: { echo: { inputSchema: { type: 'object' } } } },
      aiTools: [{ name: 'to_echo', description: 'Echo', method: 'echo', effect: 'read', ...(declared !== undefined ? { timeoutSeconds: declared } : {}) }],
    } as unknown as PluginManifest;
    const plugin: InstalledPlugin = { id: manifest.id, name: manifest.name, version: manifest.version, description: '', enabled: true, manifest, root: '/nonexistent', bundled: false, installedAt: '', updatedAt: '' };
    let seen: number | undefined;
    const workers = { invoke: async (req: { timeoutSeconds: number }) => ((seen = req.timeoutSeconds), {}) } as unknown as WorkerManager;
    const tool = pluginTool(plugin, manifest.aiTools![0]!, { plugins: async () => [plugin], workers, dataDirOf: () => '/nonexistent', ownerDataDir: async () => '/nonexistent', defaultTimeoutSeconds: () => fallback });
    await tool.invoke({}, { signal: new AbortController().signal, owner: 'o', permissionMode: 'full-access', grants: [] } as never);
    return seen;
  };

  it('uses the declared timeout clamped to [1, 600], else backend.callTimeoutSeconds', async () => {
    expect(await timeoutFor(30, 120)).toBe(30);
    expect(await timeoutFor(9999, 120)).toBe(600);
    expect(await timeoutFor(undefined, 45)).toBe(45);
  });
});
