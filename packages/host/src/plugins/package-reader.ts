import { createWriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { FengYuError, isPackagePath } from '@fengyu/protocol';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import { isInside } from '../files/grant-paths';
import './plugin-errors';

/**
 * Reads a `.fyp` (zip) safely: every entry name must be a relative POSIX path inside the
 * package (no zip-slip, no absolute paths, no duplicates), symlinks and other special files are
 * refused, and the archive is bounded by entry count, total uncompressed bytes, per-entry size
 * and per-entry compression ratio (zip bombs). Sizes are enforced on the bytes actually
 * inflated, not only on the declared ones.
 */

export interface PackageLimits {
  maxEntries: number;
  maxTotalBytes: number;
  maxEntryBytes: number;
  /** Uncompressed / compressed, checked for entries larger than 1 MiB. */
  maxRatio: number;
}

export const DEFAULT_LIMITS: PackageLimits = {
  maxEntries: 5000,
  maxTotalBytes: 512 * 1024 * 1024,
  maxEntryBytes: 256 * 1024 * 1024,
  maxRatio: 200,
};

const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;

function invalid(reason: string): FengYuError {
  return new FengYuError('invalid_package', { reason });
}

/** Checks one entry's header; returns its normalized name and whether it is a directory. */
export function checkEntry(entry: Pick<Entry, 'fileName' | 'externalFileAttributes' | 'uncompressedSize' | 'compressedSize'>, limits: PackageLimits): { name: string; directory: boolean } {
  const raw = entry.fileName;
  const directory = raw.endsWith('/');
  const name = directory ? raw.slice(0, -1) : raw;
  if (!isPackagePath(name.replace(/^(\.\/)+/, ''))) throw invalid(`entry "${raw}" escapes the package or is not a relative path`);
  const mode = (entry.externalFileAttributes >>> 16) & S_IFMT;
  if (mode !== 0 && mode !== S_IFREG && mode !== S_IFDIR) throw invalid(`entry "${raw}" is a symbolic link or special file`);
  if (entry.uncompressedSize > limits.maxEntryBytes) throw new FengYuError('package_too_large', { reason: `entry "${raw}" is larger than ${limits.maxEntryBytes} bytes` });
  if (entry.uncompressedSize > 1024 * 1024 && entry.uncompressedSize > limits.maxRatio * Math.max(1, entry.compressedSize)) {
    throw new FengYuError('package_too_large', { reason: `entry "${raw}" has a compression ratio above ${limits.maxRatio}` });
  }
  return { name: name.replace(/^(\.\/)+/, ''), directory };
}

function openZip(path: string): Promise<ZipFile> {
  return new Promise((res, rej) =>
    yauzl.open(path, { lazyEntries: true, autoClose: true, strictFileNames: true, validateEntrySizes: true }, (err, zip) =>
      err ? rej(invalid(`not a zip archive (${err.message})`)) : res(zip),
    ),
  );
}

function openStream(zip: ZipFile, entry: Entry): Promise<NodeJS.ReadableStream> {
  return new Promise((res, rej) => zip.openReadStream(entry, (err, stream) => (err ? rej(invalid(err.message)) : res(stream))));
}

/** Extracts `archive` into `dest` (which must not exist yet) and returns the file names written. */
export async function extractPackage(archive: string, dest: string, limits: PackageLimits = DEFAULT_LIMITS): Promise<string[]> {
  const zip = await openZip(archive);
  if (zip.entryCount > limits.maxEntries) {
    zip.close();
    throw new FengYuError('package_too_large', { reason: `${zip.entryCount} entries (at most ${limits.maxEntries})` });
  }
  const root = resolve(dest);
  await mkdir(root, { recursive: true });
  const seen = new Set<string>();
  const files: string[] = [];
  let total = 0;
  const onEntry = async (entry: Entry): Promise<void> => {
    const { name, directory } = checkEntry(entry, limits);
    if (seen.has(name)) throw invalid(`entry "${name}" appears twice`);
    seen.add(name);
    const target = resolve(root, name);
    if (target === root || !isInside(root, target)) throw invalid(`entry "${name}" escapes the package`);
    if (directory) return void (await mkdir(target, { recursive: true }));
    total += entry.uncompressedSize;
    if (total > limits.maxTotalBytes) throw new FengYuError('package_too_large', { reason: `more than ${limits.maxTotalBytes} uncompressed bytes` });
    await mkdir(dirname(target), { recursive: true });
    const exec = ((entry.externalFileAttributes >>> 16) & 0o100) !== 0;
    await pipeline(await openStream(zip, entry), createWriteStream(target, { flags: 'wx', mode: exec ? 0o755 : 0o644 }));
    files.push(name);
  };
  await new Promise<void>((res, rej) => {
    let failed = false;
    const fail = (e: unknown) => {
      if (failed) return;
      failed = true;
      zip.close();
      rej(e instanceof FengYuError ? e : invalid(e instanceof Error ? e.message : String(e)));
    };
    zip.on('error', fail);
    zip.on('end', () => !failed && res());
    zip.on('entry', (entry: Entry) => onEntry(entry).then(() => !failed && zip.readEntry(), fail));
    zip.readEntry();
  });
  return files;
}


/** Reads only `manifest.json` of a package (bounded), without extracting anything. */
export async function peekManifest(archive: string, maxBytes = 1024 * 1024): Promise<unknown> {
  const zip = await openZip(archive);
  return new Promise((res, rej) => {
    let settled = false;
    const settle = (fn: () => void) => {
      if (settled) return;
      settled = true;
      zip.close();
      fn();
    };
    zip.on('error', (e) => settle(() => rej(invalid(e.message))));
    zip.on('end', () => settle(() => rej(invalid('no manifest.json at the root of the package'))));
    zip.on('entry', (entry: Entry) => {
      if (entry.fileName !== 'manifest.json' && entry.fileName !== './manifest.json') return zip.readEntry();
      if (entry.uncompressedSize > maxBytes) return settle(() => rej(new FengYuError('package_too_large', { reason: 'manifest.json is too large' })));
      openStream(zip, entry).then((stream) => {
        const chunks: Buffer[] = [];
        stream.on('data', (c: Buffer) => chunks.push(c));
        stream.on('error', (e: Error) => settle(() => rej(invalid(e.message))));
        stream.on('end', () =>
          settle(() => {
            try {
              res(JSON.parse(Buffer.concat(chunks).toString('utf8')));
            } catch (e) {
              rej(new FengYuError('invalid_manifest', { count: 1 }, [{ code: 'manifest_invalid_json', params: { reason: (e as Error).message } }]));
            }
          }),
        );
      }, (e) => settle(() => rej(e)));
    });
    zip.readEntry();
  });
}
