import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

/** Builds packages/ui/dist when it is missing or older than any UI (or protocol) source file. */

export const ROOT = resolve(import.meta.dirname, '../..');
const DIST_INDEX = join(ROOT, 'packages/ui/dist/index.html');

function newest(dir: string): number {
  let max = 0;
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const p = join(dir, name);
    const st = statSync(p);
    max = Math.max(max, st.isDirectory() ? newest(p) : st.mtimeMs);
  }
  return max;
}

export function uiIsStale(): boolean {
  if (!existsSync(DIST_INDEX)) return true;
  const built = statSync(DIST_INDEX).mtimeMs;
  const sources = Math.max(newest(join(ROOT, 'packages/ui/src')), newest(join(ROOT, 'packages/protocol/src')), statSync(join(ROOT, 'packages/ui/index.html')).mtimeMs);
  return sources > built;
}

export default function setup() {
  if (!uiIsStale()) return;
  execFileSync(process.execPath, [join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', 'packages/ui', '--logLevel', 'error'], { cwd: ROOT, stdio: 'inherit' });
}
