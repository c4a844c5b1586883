import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { packPlugin } from '@fengyu/plugin-sdk/pack';

/**
 * The official plugins' `.fyp` bundles for tests: `packages/plugins/<name>/dist/<id>-<version>.fyp`,
 * rebuilt with the SDK's packer when missing or older than any source file (so a test never runs
 * a stale worker). Packs into a temporary name, then renames: parallel test files never see a
 * half-written bundle.
 */

export const PLUGINS_ROOT = join(import.meta.dirname, '../../../plugins');
export const OFFICIAL = ['excel', 'email'] as const;

function newest(dir: string): number {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    if (e.name === 'dist' || e.name === 'test' || e.name === 'node_modules') continue;
    const p = join(dir, e.name);
    t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

export async function freshBundle(name: (typeof OFFICIAL)[number]): Promise<string> {
  const dir = join(PLUGINS_ROOT, name);
  const dist = join(dir, 'dist');
  const current = existsSync(dist) ? readdirSync(dist).filter((f) => f.endsWith('.fyp')) : [];
  const sdk = newest(join(PLUGINS_ROOT, '../plugin-sdk/src'));
  const stale = current.length !== 1 || statSync(join(dist, current[0] as string)).mtimeMs < Math.max(newest(dir), sdk);
  if (stale) {
    await mkdir(dist, { recursive: true });
    const tmp = join(dist, `.build-${process.pid}-${Date.now()}.fyp.tmp`);
    const { manifest } = await packPlugin(dir, tmp);
    await rename(tmp, join(dist, `${manifest.id}-${manifest.version}.fyp`));
  }
  return dist;
}

/** Both bundle directories, fresh: pass them as `bundledPluginDirs`. */
export async function officialBundleDirs(): Promise<string[]> {
  const out: string[] = [];
  for (const name of OFFICIAL) out.push(await freshBundle(name));
  return out;
}
