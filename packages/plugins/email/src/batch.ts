import { randomBytes } from 'node:crypto';
import { copyFile, mkdir, readdir, rm, stat } from 'node:fs/promises';
import { basename, isAbsolute, join } from 'node:path';
import { emailError } from './errors';
import { readJson, writeJson } from './json-store';

/**
 * Prepared batches: `email_send_batch` writes one `batches/<confirmationId>/batch.json` with a
 * message per part and copies each attachment next to it, so what was previewed is exactly what
 * `confirm_send` sends, even if the source files change or their grant ends. Each message keeps
 * its own status; `confirm_send` updates it after every message.
 */

export const MAX_ATTACHMENT_BYTES = 25 * 1024 * 1024;
/** Prepared batches (sent or not) are kept 30 days, then removed when the next batch is prepared. */
export const BATCH_RETENTION_MS = 30 * 24 * 3600_000;

export type MessageStatus = 'pending' | 'sent' | 'failed';

export interface PreparedMessage {
  index: number;
  value: string | null;
  to: string[];
  cc: string[];
  subject: string;
  text: string;
  attachment: { name: string; path: string; bytes: number } | null;
  /** Same Message-ID on every attempt, so a receiver can drop a duplicate. */
  messageId: string;
  status: MessageStatus;
  sentAt?: string;
  error?: string;
  attempts: number;
}

export interface PreparedBatch {
  confirmationId: string;
  accountId: string;
  createdAt: string;
  messages: PreparedMessage[];
}

export interface PartInput {
  path: string;
  name?: string;
  value?: string | null;
  rowCount?: number;
}

export interface MessageDraft {
  part: PartInput | null;
  to: string[];
  cc: string[];
  subject: string;
  text: string;
}

const ID = /^cf_[0-9a-f]{32}$/;

export function newConfirmationId(): string {
  return `cf_${randomBytes(16).toString('hex')}`;
}

/** `{value}`, `{name}`, `{rowCount}`, `{index}` and `{count}` in a subject or body. */
export function fillTemplate(template: string, vars: Record<string, string | number>): string {
  return template.replace(/\{(value|name|rowCount|index|count)\}/g, (_, k: string) => String(vars[k] ?? ''));
}

export function checkPartPath(path: unknown, field: string): string {
  if (path !== null && typeof path === 'object') throw emailError('email_unresolved_file_ref', { field });
  if (typeof path !== 'string' || !isAbsolute(path)) throw emailError('email_path_not_absolute', { field, path: String(path) });
  return path;
}

export class BatchStore {
  constructor(private readonly dataDir: string) {}

  dirOf(id: string): string {
    return join(this.dataDir, 'batches', id);
  }

  /** Checks every attachment, copies them, and persists the batch (nothing is sent). */
  async prepare(accountId: string, drafts: MessageDraft[], now: Date): Promise<PreparedBatch> {
    await this.prune(now);
    const id = newConfirmationId();
    const dir = this.dirOf(id);
    const sizes: number[] = [];
    for (const d of drafts) {
      if (!d.part) {
        sizes.push(0);
        continue;
      }
      const info = await stat(d.part.path).catch(() => null);
      if (!info?.isFile()) throw emailError('email_attachment_missing', { path: d.part.path });
      if (info.size > MAX_ATTACHMENT_BYTES) throw emailError('email_attachment_too_large', { name: basename(d.part.path), bytes: info.size, limit: MAX_ATTACHMENT_BYTES });
      sizes.push(info.size);
    }
    await mkdir(dir, { recursive: true, mode: 0o700 });
    const messages: PreparedMessage[] = [];
    for (const [i, d] of drafts.entries()) {
      let attachment: PreparedMessage['attachment'] = null;
      if (d.part) {
        const name = d.part.name?.trim() || basename(d.part.path);
        const copy = join(dir, `${String(i + 1).padStart(3, '0')}-${basename(d.part.path)}`);
        await copyFile(d.part.path, copy);
        attachment = { name, path: copy, bytes: sizes[i] as number };
      }
      messages.push({ index: i + 1, value: d.part?.value ?? null, to: d.to, cc: d.cc, subject: d.subject, text: d.text, attachment, messageId: `<${id}.${i + 1}@fengyu.local>`, status: 'pending', attempts: 0 });
    }
    const batch: PreparedBatch = { confirmationId: id, accountId, createdAt: now.toISOString(), messages };
    await this.save(batch);
    return batch;
  }

  /** Removes batches prepared more than BATCH_RETENTION_MS ago (their copies of the attachments go with them). */
  async prune(now: Date): Promise<number> {
    const root = join(this.dataDir, 'batches');
    const ids = await readdir(root).catch(() => [] as string[]);
    let removed = 0;
    for (const id of ids.filter((d) => ID.test(d))) {
      const batch = await readJson<PreparedBatch | null>(join(root, id, 'batch.json'), null).catch(() => null);
      const created = batch ? Date.parse(batch.createdAt) : Number.NaN;
      if (Number.isFinite(created) && now.getTime() - created > BATCH_RETENTION_MS) {
        await rm(join(root, id), { recursive: true, force: true });
        removed++;
      }
    }
    return removed;
  }

  async load(id: string): Promise<PreparedBatch> {
    const batch = ID.test(id) ? await readJson<PreparedBatch | null>(join(this.dirOf(id), 'batch.json'), null) : null;
    if (!batch) throw emailError('email_confirmation_not_found', { confirmationId: id });
    return batch;
  }

  async save(batch: PreparedBatch): Promise<void> {
    await writeJson(join(this.dirOf(batch.confirmationId), 'batch.json'), batch, 0o600);
  }
}
