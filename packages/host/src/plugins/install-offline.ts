import pino from 'pino';
import { migrate, openDatabase } from '../storage/database';
import type { InstalledPlugin } from './plugin.repository';
import { PluginRepository } from './plugin.repository';
import { PluginService } from './plugin.service';
import { WorkerManager } from './worker-manager';

/**
 * `installPackage`: installs (or upgrades) a `.fyp` into a FENGYU_HOME without HTTP and without a
 * running host — the same checks as `POST /api/plugins`, except that tool names are only checked
 * against installed plugins and `otherToolNames` (no catalog exists offline). A host running on
 * the same home sees the plugin on its next catalog (the database is shared, WAL).
 */
export async function installPackage(options: { home: string; file: string; otherToolNames?: string[]; bundled?: boolean }): Promise<InstalledPlugin> {
  const database = openDatabase(options.home);
  const logger = pino({ level: 'silent' });
  const workers = new WorkerManager({ backend: { posture: { mode: 'unsandboxed', backend: 'none' } }, logger });
  try {
    await migrate(database.db);
    const { parsePluginHooks } = await import('../permissions/hook-config');
    const service = new PluginService({
      repo: new PluginRepository(database.db),
      workers,
      home: options.home,
      clock: { now: () => Date.now() },
      logger,
      validateHooks: (id, doc) => void parsePluginHooks(id, doc),
      otherToolNames: async () => options.otherToolNames ?? [],
    });
    return await service.installPackage(options.file, { bundled: options.bundled });
  } finally {
    await workers.close();
    await database.close();
  }
}
