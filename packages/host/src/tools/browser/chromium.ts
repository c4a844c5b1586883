import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, join } from 'node:path';

/**
 * Finding the system Chromium at run time. Nothing is ever downloaded: when no executable is
 * found the browser tools stay in the catalog with `available: false` and explain how to
 * install the Debian package.
 */

/** Executable names looked up on PATH, in order. */
export const CHROMIUM_NAMES = ['chromium', 'chromium-browser'] as const;
/** Well-known install locations checked after PATH. */
export const CHROMIUM_PATHS = ['/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/lib/chromium/chromium', '/snap/bin/chromium'] as const;

export type ChromiumLookup = { path: string } | { missing: string };

export interface ChromiumEnv {
  /** An explicit executable (FENGYU_CHROMIUM); when set, it is the only candidate. */
  override?: string;
  /** The PATH variable. */
  path?: string;
  /** True when `file` is an executable regular file. */
  isExecutable?: (file: string) => boolean;
}

export function isExecutableFile(file: string): boolean {
  try {
    if (!statSync(file).isFile()) return false;
    accessSync(file, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The first executable among FENGYU_CHROMIUM, `chromium` on PATH, then the known paths. */
export function findChromium(env: ChromiumEnv): ChromiumLookup {
  const ok = env.isExecutable ?? isExecutableFile;
  if (env.override) return ok(env.override) ? { path: env.override } : { missing: `FENGYU_CHROMIUM=${env.override} is not an executable file` };
  const dirs = (env.path ?? '').split(delimiter).filter((d) => d !== '');
  for (const name of CHROMIUM_NAMES) {
    for (const dir of dirs) {
      const file = join(dir, name);
      if (ok(file)) return { path: file };
    }
  }
  for (const file of CHROMIUM_PATHS) if (ok(file)) return { path: file };
  return { missing: `no ${CHROMIUM_NAMES.join(' or ')} on PATH nor at ${CHROMIUM_PATHS.join(', ')}` };
}
