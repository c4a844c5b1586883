import { execFile } from 'node:child_process';
import { createWriteStream, existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { FengYuError, localize, type PluginManifest, validateManifest } from '@fengyu/protocol';
import { build } from 'esbuild';
import yazl from 'yazl';
import { DESCRIBE_FLAG, type Description } from './wire';

/**
 * Builds and packs a plugin: bundles the TypeScript worker with esbuild into one JS file (so it
 * runs with plain `node`), asks the bundle for its methods (`--fengyu-describe`) to generate the
 * manifest's `rpc.methods`, validates the manifest and zips the result as a `.fyp`.
 *
 * Plugin source layout: `manifest.json` (without `rpc`, or with extra methods), `src/worker.ts`
 * (or `options.entry`), optional `hooks/`, `assets/`, `README.md`, `LICENSE`. A directory with no
 * TypeScript entry is packed as is: its `worker` must already be one self-contained JS file.
 */

export interface PackOptions {
  /** Worker entry (TypeScript or JS) to bundle; default `src/worker.ts` when it exists. */
  entry?: string;
  /** Skip running the bundle for `rpc.methods` (the manifest must then declare them). */
  noDescribe?: boolean;
}

export interface PackResult {
  file: string;
  manifest: PluginManifest;
}

const EXTRA = ['hooks', 'assets', 'README.md', 'LICENSE'];
/** Fixed entry time: the same sources give the same archive bytes. */
const EPOCH = new Date('2020-01-01T00:00:00Z');

export async function packPlugin(dir: string, out?: string, options: PackOptions = {}): Promise<PackResult> {
  const root = resolve(dir);
  const template = await readManifest(root);
  const worker = typeof template.worker === 'string' ? template.worker.replace(/^(\.\/)+/, '') : 'worker.mjs';
  const staging = await mkdtemp(join(tmpdir(), 'fengyu-pack-'));
  try {
    const entry = options.entry ?? ['src/worker.ts', 'src/index.ts'].find((f) => existsSync(join(root, f)));
    const target = join(staging, worker);
    if (!target.startsWith(staging + sep)) throw new FengYuError('invalid_package', { reason: `worker path ${worker} escapes the package` });
    await mkdir(dirname(target), { recursive: true });
    if (entry) await bundle(resolve(root, entry), target);
    else await cp(join(root, worker), target);
    for (const extra of EXTRA) if (existsSync(join(root, extra))) await cp(join(root, extra), join(staging, extra), { recursive: true });
    const described = options.noDescribe ? undefined : await describe(target);
    const declared = (template.rpc as { methods?: Record<string, unknown> } | undefined)?.methods ?? {};
    const manifest = { ...template, worker, rpc: { methods: { ...declared, ...(described?.methods ?? {}) } } };
    const files = await listFiles(staging);
    const checked = validateManifest(manifest, { files: new Set(files) });
    if (!checked.ok) {
      const problems = checked.problems.map((p) => ({ ...p, message: `${p.field ? `${p.field}: ` : ''}${localize(p.code, p.params ?? {})}` }));
      throw new FengYuError('invalid_manifest', { count: problems.length }, problems);
    }
    await writeFile(join(staging, 'manifest.json'), `${JSON.stringify(manifest, null, 2)}\n`);
    const file = resolve(out ?? join(root, 'dist', `${checked.manifest.id}-${checked.manifest.version}.fyp`));
    await zipDir(staging, [...files, 'manifest.json'].sort(), file);
    return { file, manifest: checked.manifest };
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

async function readManifest(root: string): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await readFile(join(root, 'manifest.json'), 'utf8');
  } catch (e) {
    throw new FengYuError('invalid_package', { reason: `no manifest.json in ${root}` }, undefined, { cause: e });
  }
  try {
    return JSON.parse(text) as Record<string, unknown>;
  } catch (e) {
    throw new FengYuError('invalid_manifest', { count: 1 }, [{ code: 'manifest_invalid_json', params: { reason: String(e) } }]);
  }
}

/** One self-contained file; `.mjs` → ESM (with a `require` shim for CommonJS deps), else CommonJS. */
async function bundle(entry: string, outfile: string): Promise<void> {
  const esm = outfile.endsWith('.mjs');
  await build({
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: esm ? 'esm' : 'cjs',
    logLevel: 'silent',
    legalComments: 'none',
    // A plugin packed by this SDK gets this SDK's runtime, even outside the monorepo's node_modules.
    alias: { '@fengyu/plugin-sdk': join(import.meta.dirname, 'index.ts') },
    ...(esm ? { banner: { js: "import { createRequire as __fyCreateRequire } from 'node:module'; const require = __fyCreateRequire(import.meta.url);" } } : {}),
  });
}

function describe(worker: string): Promise<Description> {
  return new Promise((resolvePromise, reject) => {
    execFile(process.execPath, [worker, DESCRIBE_FLAG], { timeout: 30_000, maxBuffer: 16 * 1024 * 1024 }, (err, stdout, stderr) => {
      if (err) return reject(new FengYuError('invalid_package', { reason: `the worker failed to describe itself: ${stderr || err.message}` }));
      try {
        const line = stdout.split('\n').find((l) => l.trim().startsWith('{"methods"'));
        resolvePromise(JSON.parse(line ?? stdout) as Description);
      } catch {
        reject(new FengYuError('invalid_package', { reason: 'the worker printed no method description (does it call createWorker()...start()?)' }));
      }
    });
  });
}

async function listFiles(root: string, at = root): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(at, { withFileTypes: true })) {
    const full = join(at, entry.name);
    if (entry.isSymbolicLink()) throw new FengYuError('invalid_package', { reason: `symbolic link ${relative(root, full)} cannot be packed` });
    if (entry.isDirectory()) out.push(...(await listFiles(root, full)));
    else if (entry.isFile()) out.push(relative(root, full).split(sep).join('/'));
  }
  return out;
}

async function zipDir(root: string, files: string[], out: string): Promise<void> {
  await mkdir(dirname(out), { recursive: true });
  const zip = new yazl.ZipFile();
  for (const f of files) {
    const s = await stat(join(root, f));
    zip.addFile(join(root, f), f, { mtime: EPOCH, mode: s.mode & 0o100 ? 0o100755 : 0o100644 });
  }
  zip.end();
  await new Promise<void>((resolvePromise, reject) => {
    const stream = createWriteStream(out);
    zip.outputStream.pipe(stream).on('close', resolvePromise).on('error', reject);
    zip.outputStream.on('error', reject);
  });
}
