import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { extractPackage } from '../../src/plugins/package-reader';
import type { InstalledPlugin } from '../../src/plugins/plugin.repository';
import { PluginToolSource } from '../../src/plugins/plugin-tool-source';
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
    const source = new PluginToolSource({ plugins: async () => [plugin], workers, dataDirOf: () => join(home, 'plugin-data/test.fengyu.probe'), defaultTimeoutSeconds: () => 120 });
    return { source, close: () => workers.close() };
  },
  sample: (tool) => (tool.name === 'probe_echo' ? { value: 1 } : tool.name === 'probe_noop' ? {} : undefined),
});
