#!/usr/bin/env node
// Compiles the host and the `fengyu` CLI to plain JavaScript (dist/host/), so `serve` starts
// without a TypeScript loader: one ESM bundle of the CLI (the workspace packages inlined,
// dependencies from node_modules left as imports) and each database migration as its own file
// (migrations are loaded by name at start). A file's `import.meta.dirname` keeps naming its
// source folder, so data files (workflow templates, the SDK's sources) are found where they are.
// The stamp of the sources it was built from is written next to it; bin/fengyu.mjs runs the
// bundle only while that stamp still matches.
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build } from 'esbuild';
import { HOST_SOURCES, hostStamp } from './host-stamp.mjs';

const root = join(import.meta.dirname, '..');
const out = join(root, 'dist/host');

const sourceDirs = {
  name: 'fengyu-source-dirs',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => (args.path.startsWith('@fengyu/') ? undefined : { path: args.path, external: true }));
    b.onLoad({ filter: /\.ts$/ }, (args) => {
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
  "const __fyRoot = __fyPath(new URL('../../', import.meta.url));",
  'const __fyDir = (d) => __fyJoin(__fyRoot, d);',
  "const __fyMigrations = __fyJoin(__fyRoot, 'dist/host/migrations');",
].join('\n');

export async function buildHost() {
  const stamp = hostStamp();
  rmSync(out, { recursive: true, force: true });
  mkdirSync(out, { recursive: true });
  const common = { bundle: true, platform: 'node', format: 'esm', target: 'node20', plugins: [sourceDirs], banner: { js: banner }, logLevel: 'warning', sourcemap: 'linked' };
  await build({ ...common, entryPoints: [join(root, 'packages/host/src/cli/main.ts')], outfile: join(out, 'fengyu.mjs') });
  const migrations = join(root, 'packages/host/src/storage/migrations');
  const files = readdirSync(migrations).filter((f) => /^\d{3}-.*\.ts$/.test(f) && !f.includes('.test.'));
  await build({ ...common, entryPoints: files.map((f) => join(migrations, f)), outdir: join(out, 'migrations'), outExtension: { '.js': '.js' }, sourcemap: false });
  writeFileSync(join(out, 'stamp'), stamp);
  return { sources: HOST_SOURCES.length };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await buildHost();
