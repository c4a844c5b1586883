// The stamp of the sources the compiled host (dist/host) is built from: SHA-256 over the path,
// size and mtime of every file under these folders (tests excluded), and of package-lock.json
// (the dependencies bundled into it). Cheap enough for every start.
import { createHash } from 'node:crypto';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = join(import.meta.dirname, '..');
export const HOST_SOURCES = ['packages/host/src', 'packages/protocol/src', 'packages/plugin-sdk/src', 'scripts/build-host.mjs', 'package-lock.json'];

function walk(path, out) {
  const s = statSync(path);
  if (!s.isDirectory()) {
    if (!/\.test\.ts$/.test(path)) out.push([path, s]);
    return out;
  }
  for (const e of readdirSync(path)) if (e !== 'node_modules' && e !== 'dist') walk(join(path, e), out);
  return out;
}

/** The stamp of the host's sources under `base` (the repository). */
export function hostStamp(base = root) {
  const hash = createHash('sha256');
  for (const dir of HOST_SOURCES) {
    const files = walk(join(base, dir), []).sort((a, b) => (a[0] < b[0] ? -1 : 1));
    for (const [file, s] of files) hash.update(`${relative(base, file)}\0${s.size}\0${s.mtimeMs}\n`);
  }
  return hash.digest('hex');
}
