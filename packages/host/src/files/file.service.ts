import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { copyFile, link, mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { FengYuError } from '@fengyu/protocol';
import type { Clock } from '../clock';
import { type FileRef, FileRepository, toFileRef } from './file.repository';
import '../plugins/plugin-errors';
import type { Db } from '../storage/database';

/** Stores uploads under `$FENGYU_HOME/files/<id>/<name>` with their size and SHA-256. */

export const DEFAULT_MAX_UPLOAD_BYTES = 256 * 1024 * 1024;

/** File systems limit a name to 255 bytes; with the `.…part` of an upload in progress this leaves room. */
const MAX_NAME_BYTES = 200;

/** The longest start of `text` that fits `max` UTF-8 bytes, never splitting a character. */
function fitBytes(text: string, max: number): string {
  let out = '';
  let bytes = 0;
  for (const ch of text) {
    bytes += Buffer.byteLength(ch);
    if (bytes > max) break;
    out += ch;
  }
  return out;
}

/**
 * A file name safe on every platform: no separators, no control characters, no dot-only names,
 * at most 200 UTF-8 bytes (a long non-ASCII name is shortened, keeping a short extension).
 */
export function safeFileName(name: string): string {
  const base = name.split(/[\\/]/).pop() ?? '';
  let cleaned = base.replace(/[\u0000-\u001f\u007f<>:"|?*]/g, '_').trim();
  if (Buffer.byteLength(cleaned) > MAX_NAME_BYTES) {
    const ext = /\.[A-Za-z0-9]{1,16}$/.exec(cleaned)?.[0] ?? '';
    cleaned = fitBytes(cleaned.slice(0, cleaned.length - ext.length), MAX_NAME_BYTES - ext.length).trim() + ext;
  }
  return cleaned === '' || /^\.+$/.test(cleaned) ? 'upload' : cleaned;
}

export class FileService {
  readonly repo: FileRepository;

  constructor(
    db: Db,
    private readonly home: string,
    private readonly clock: Clock,
    readonly maxBytes = DEFAULT_MAX_UPLOAD_BYTES,
  ) {
    this.repo = new FileRepository(db);
  }

  /** Streams an upload to disk, hashing it; refuses more than `maxBytes` (file_too_large). */
  async store(owner: string, name: string, stream: NodeJS.ReadableStream, signal?: AbortSignal): Promise<FileRef> {
    const id = randomUUID();
    const dir = join(this.home, 'files', id);
    const fileName = safeFileName(name);
    const partial = join(dir, `.${fileName}.part`);
    await mkdir(dir, { recursive: true });
    const hash = createHash('sha256');
    let size = 0;
    const max = this.maxBytes;
    const meter = new Transform({
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (size > max) return done(new FengYuError('file_too_large', { limit: max }));
        hash.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await pipeline(stream, meter, createWriteStream(partial, { flags: 'wx', mode: 0o600 }), { signal });
      if ((stream as { truncated?: boolean }).truncated) throw new FengYuError('file_too_large', { limit: max });
      const path = join(dir, fileName);
      await rename(partial, path);
      const row = { id, owner, name: fileName, size, sha256: hash.digest('hex'), path, created_at: new Date(this.clock.now()).toISOString() };
      await this.repo.insert(row);
      return toFileRef(row);
    } catch (e) {
      await rm(dir, { recursive: true, force: true });
      throw e;
    }
  }

  /**
   * A copy of the owner's upload `id` under a new FileRef, for a holder that keeps it (a
   * schedule): a hard link (no second copy of the bytes), or a copy where linking fails. The
   * holder releases it with `release`; the original upload is untouched either way.
   */
  async keep(owner: string, id: string): Promise<FileRef> {
    const src = await this.repo.get(owner, id);
    if (!src) throw new FengYuError('invalid_files', { count: 1 }, [{ code: 'files_unknown_ref', field: 'files', params: { name: id, fileId: id } }]);
    const copyId = randomUUID();
    const dir = join(this.home, 'files', copyId);
    const path = join(dir, src.name);
    await mkdir(dir, { recursive: true });
    try {
      await link(src.path, path).catch(() => copyFile(src.path, path));
      const row = { ...src, id: copyId, path, created_at: new Date(this.clock.now()).toISOString() };
      await this.repo.insert(row);
      return toFileRef(row);
    } catch (e) {
      await rm(dir, { recursive: true, force: true });
      throw e;
    }
  }

  /** Deletes a kept copy (its row, then its bytes); an unknown id is already released. */
  async release(owner: string, id: string): Promise<void> {
    const row = await this.repo.get(owner, id);
    if (!row) return;
    await this.repo.delete(owner, id);
    await rm(dirname(row.path), { recursive: true, force: true });
  }
}
