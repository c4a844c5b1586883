import { randomBytes } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';

/** Small JSON files in the plugin data dir, replaced atomically (write a temp file, then rename). */

export async function readJson<T>(path: string, fallback: T): Promise<T> {
  try {
    return JSON.parse(await readFile(path, 'utf8')) as T;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return fallback;
    throw e;
  }
}

export async function writeJson(path: string, value: unknown, mode = 0o644): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const tmp = `${path}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    await writeFile(tmp, `${JSON.stringify(value, null, 2)}\n`, { mode });
    await rename(tmp, path);
  } finally {
    jsonFiles.forget(path);
  }
}

/**
 * The text of small JSON files read on every call (accounts, secrets, groups), kept while the
 * file is unchanged. Each read costs one `stat`: a different device, inode, size, modification or
 * change time (nanoseconds) reads the file again, so a file replaced or edited by anyone (another
 * worker of this plugin, the user) is seen on the next read, and this worker's own writes drop
 * the entry. A file changed (ctime) less than `settleMs` before it was read is not kept: a second change
 * within the file system's timestamp granularity could leave every stat field as it was. Each
 * read returns a freshly parsed value (callers may change it).
 */
export class JsonFileCache {
  private readonly entries = new Map<string, { key: string; text: string }>();
  /** Reads answered from memory (for tests). */
  hits = 0;

  constructor(
    private readonly nowMs: () => number = () => Date.now(),
    private readonly settleMs = 3000,
  ) {}

  read<T>(path: string, fallback: T): T {
    const st = statSync(path, { bigint: true, throwIfNoEntry: false });
    if (!st) {
      this.entries.delete(path);
      return fallback;
    }
    const key = `${st.dev}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}`;
    const cached = this.entries.get(path);
    if (cached?.key === key) {
      this.hits++;
      return JSON.parse(cached.text) as T;
    }
    let text: string;
    try {
      text = readFileSync(path, 'utf8');
    } catch (e) {
      this.entries.delete(path);
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return fallback;
      throw e;
    }
    // The change time moves with every write, rename and metadata change (no one can set it).
    const settled = BigInt(Math.floor(this.nowMs() - this.settleMs)) * 1_000_000n > st.ctimeNs;
    if (settled) this.entries.set(path, { key, text });
    else this.entries.delete(path);
    return JSON.parse(text) as T;
  }

  /** Drops a file's entry (after writing it). */
  forget(path: string): void {
    this.entries.delete(path);
  }
}

/** The worker's cache of its hot JSON files (every writer goes through `writeJson`). */
export const jsonFiles = new JsonFileCache();

/** `readJson` for files read on every call: answered from `jsonFiles` while the file is unchanged. */
export function readJsonCached<T>(path: string, fallback: T): T {
  return jsonFiles.read(path, fallback);
}
