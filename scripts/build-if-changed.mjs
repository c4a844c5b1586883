#!/usr/bin/env node
// `npm start`'s build step: rebuilds the web UI and the bundled plugins only when their sources
// changed since their last build. A package's stamp is a SHA-256 over the path, size and mtime of
// every file it builds from (its own folder without dist/ and node_modules/, plus the shared
// packages it bundles); the stamp of the last good build is kept in node_modules/.cache/fengyu-build/.
// The host and CLI are compiled to dist/host when their sources changed (scripts/build-host.mjs).
// `--force` rebuilds everything.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildHost } from './build-host.mjs';
import { hostStamp } from './host-stamp.mjs';

const root = join(import.meta.dirname, '..');
const SKIP = new Set(['node_modules', 'dist', '.vite', 'coverage', 'test']);

/** What each built package is made from (folders relative to the repository). */
const TARGETS = [
  { workspace: 'packages/ui', from: ['packages/ui', 'packages/protocol/src'] },
  { workspace: 'packages/plugins/excel', from: ['packages/plugins/excel', 'packages/plugin-sdk/src', 'packages/plugin-sdk/bin', 'packages/protocol/src'] },
  { workspace: 'packages/plugins/email', from: ['packages/plugins/email', 'packages/plugin-sdk/src', 'packages/plugin-sdk/bin', 'packages/protocol/src'] },
];

function walk(dir, out) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (SKIP.has(entry.name)) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) walk(path, out);
    else if (entry.isFile()) out.push(path);
  }
  return out;
}

/** The stamp of the files under `from` (folders relative to `base`). */
export function stampOf(from, base = root) {
  const hash = createHash('sha256');
  for (const dir of from) {
    for (const file of walk(join(base, dir), []).sort()) {
      const s = statSync(file);
      hash.update(`${relative(base, file)}\0${s.size}\0${s.mtimeMs}\n`);
    }
  }
  return hash.digest('hex');
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const stamps = join(root, 'node_modules/.cache/fengyu-build');
  mkdirSync(stamps, { recursive: true });
  const force = process.argv.includes('--force');
  let built = 0;
  for (const t of TARGETS) {
    const stampFile = join(stamps, `${t.workspace.replaceAll('/', '_')}.stamp`);
    const output = join(root, t.workspace, 'dist');
    const stamp = stampOf(t.from);
    if (!force && existsSync(output) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) continue;
    process.stdout.write(`building ${t.workspace} (sources changed)\n`);
    execFileSync('npm', ['run', 'build', '--silent', '-w', t.workspace], { cwd: root, stdio: 'inherit' });
    writeFileSync(stampFile, stamp);
    built += 1;
  }
  const hostStampFile = join(root, 'dist/host/stamp');
  if (force || !existsSync(hostStampFile) || readFileSync(hostStampFile, 'utf8') !== hostStamp()) {
    process.stdout.write('compiling the host and CLI (sources changed)\n');
    await buildHost();
    built += 1;
  }
  if (built === 0) process.stdout.write('UI, plugins and host are up to date\n');
}
