#!/usr/bin/env node
// Compiles the host and the `fengyu` CLI to plain JavaScript (dist/host/), so `serve` starts
// without a TypeScript loader. One ESM build: the CLI entry (dist/host/fengyu.mjs), each database
// migration as its own entry (dist/host/migrations/NNN-name.mjs; migrations are loaded by name at
// start) and shared chunks (dist/host/chunks/). The workspace packages and the npm dependencies
// are bundled in, so a start reads a few files instead of resolving and compiling thousands of
// modules; what the source imports with `import()` becomes its own chunk, read only when first
// used. Left as imports from node_modules: native addons and packages that locate their own files
// at run time (better-sqlite3, esbuild, the tree-sitter parser and grammar, playwright-core) and
// the optional PostgreSQL drivers (pg, pg-boss: loaded only for a shared database).
// A file's `import.meta.dirname` keeps naming its source folder, so data files (workflow
// templates, the SDK's sources) are found where they are.
// The stamp of the sources (and of package-lock.json) it was built from is written last;
// bin/fengyu.mjs runs the build only while that stamp still matches. Files are replaced one by one
// (rename), never deleted first: a host already running from an earlier build may still read its
// lazy chunks, so chunks of earlier builds are pruned only when a day old.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { HOST_SOURCES, hostStamp } from './host-stamp.mjs';

const root = join(import.meta.dirname, '..');
const out = join(root, 'dist/host');
const PRUNE_AFTER_MS = 24 * 60 * 60 * 1000;

/** Packages read from node_modules at run time instead of being bundled. */
export const EXTERNAL = ['better-sqlite3', 'esbuild', 'playwright-core', 'web-tree-sitter', 'tree-sitter-bash', 'pg', 'pg-native', 'pg-boss'];

const packageName = (spec) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);

const sourceDirs = {
  name: 'fengyu-source-dirs',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (EXTERNAL.includes(packageName(args.path)) ? { path: args.path, external: true } : undefined));
    b.onLoad({ filter: /\.ts$/ }, (args) => {
      if (args.path.includes(join('node_modules', ''))) return undefined;
      let text = readFileSync(args.path, 'utf8');
      const dir = relative(root, dirname(args.path));
      if (args.path.endsWith(join('storage', 'database.ts'))) text = text.replace("join(import.meta.dirname, 'migrations')", '__fyMigrations');
      text = text.replaceAll('import.meta.dirname', `__fyDir(${JSON.stringify(dir)})`);
      return { contents: text, loader: 'ts' };
    });
  },
};

const banner = [
  "import { fileURLToPath as __fyPath } from 'node:url';",
  "import { join as __fyJoin } from 'node:path';",
  "import { createRequire as __fyCreateRequire } from 'node:module';",
  // bundled CommonJS dependencies require Node's built-in modules through this
  'const require = __fyCreateRequire(import.meta.url);',
  // the repository: where dist/host/ is (for the entry, a migration or a chunk alike)
  "const __fyRoot = __fyPath(import.meta.url.slice(0, import.meta.url.lastIndexOf('/dist/host/') + 1));",
  'const __fyDir = (d) => __fyJoin(__fyRoot, d);',
  "const __fyMigrations = __fyJoin(__fyRoot, 'dist/host/migrations');",
].join('\n');

/** Files under `dir` (paths relative to `base`). */
function listFiles(dir, base = dir, acc = []) {
  let entries = [];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return acc;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) listFiles(p, base, acc);
    else acc.push(relative(base, p));
  }
  return acc;
}

export async function buildHost() {
  const stamp = hostStamp();
  const staging = join(root, 'dist', `.host-build-${process.pid}`);
  rmSync(staging, { recursive: true, force: true });
  mkdirSync(staging, { recursive: true });
  const migrations = join(root, 'packages/host/src/storage/migrations');
  const entryPoints = { fengyu: join(root, 'packages/host/src/cli/main.ts') };
  for (const f of readdirSync(migrations).filter((f) => /^\d{3}-.*\.ts$/.test(f) && !f.includes('.test.'))) entryPoints[`migrations/${f.replace(/\.ts$/, '')}`] = join(migrations, f);
  try {
    const result = await build({
      entryPoints,
      outdir: staging,
      bundle: true,
      splitting: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      outExtension: { '.js': '.mjs' },
      chunkNames: 'chunks/[name]-[hash]',
      plugins: [sourceDirs],
      banner: { js: banner },
      logLevel: 'warning',
      sourcemap: 'linked',
      legalComments: 'none',
      metafile: !!process.env.FENGYU_BUILD_META,
    });
    // what went into which file (for size and start-up work): FENGYU_BUILD_META=<file>
    if (result.metafile) writeFileSync(process.env.FENGYU_BUILD_META, JSON.stringify(result.metafile));
    // Replace file by file: chunks first, then the migrations and the entry; the stamp last.
    const built = listFiles(staging);
    const order = (f) => (f.startsWith('chunks/') ? 0 : f.startsWith('migrations/') ? 1 : 2);
    for (const f of built.sort((a, b) => order(a) - order(b))) {
      mkdirSync(dirname(join(out, f)), { recursive: true });
      renameSync(join(staging, f), join(out, f));
    }
    const keep = new Set([...built, 'stamp']);
    const now = Date.now();
    for (const f of listFiles(out)) {
      if (keep.has(f)) continue;
      const p = join(out, f);
      // a migration no longer built must not be run by name; another build's chunks wait a day
      if (!f.startsWith('chunks/') || now - statSync(p).mtimeMs > PRUNE_AFTER_MS) rmSync(p, { force: true });
    }
    writeFileSync(join(out, 'stamp'), stamp);
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return { sources: HOST_SOURCES.length };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await buildHost();
