import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compareSemver } from '@fengyu/protocol';
import type { Logger } from 'pino';
import { peekManifest } from './package-reader';
import type { PluginService } from './plugin.service';

/**
 * Bundled plugins (`*.fyp` in the configured directories, e.g. `packages/plugins/<name>/dist/`):
 * installed at first start, upgraded when a bundle carries a higher version. A bundled plugin
 * the user uninstalled is not reinstalled (remembered in `plugins/.bundled.json`).
 */

export async function installBundledPlugins(service: PluginService, dirs: readonly string[], home: string, logger: Logger): Promise<string[]> {
  const markerFile = join(home, 'plugins', '.bundled.json');
  const seen = new Set<string>(existsSync(markerFile) ? (JSON.parse(readFileSync(markerFile, 'utf8')) as string[]) : []);
  const installed: string[] = [];
  for (const dir of dirs) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir).filter((f) => f.endsWith('.fyp')).sort()) {
      const file = join(dir, name);
      try {
        const m = (await peekManifest(file)) as { id?: string; version?: string };
        if (typeof m.id !== 'string' || typeof m.version !== 'string') throw new Error('manifest without id/version');
        const current = (await service.list()).find((p) => p.id === m.id);
        if (!current && seen.has(m.id)) continue; // uninstalled by the user
        if (current && compareSemver(m.version, current.version) <= 0) continue;
        await service.installPackage(file, { bundled: true });
        seen.add(m.id);
        installed.push(`${m.id}@${m.version}`);
      } catch (e) {
        logger.warn({ file, err: (e as Error).message }, 'bundled plugin not installed');
      }
    }
  }
  if (installed.length > 0) writeFileSync(markerFile, JSON.stringify([...seen].sort()));
  return installed;
}
