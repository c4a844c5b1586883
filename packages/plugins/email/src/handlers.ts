import { readFile } from 'node:fs/promises';
import { basename } from 'node:path';
import type { MethodContext } from '@fengyu/plugin-sdk';
import type { z } from 'zod';
import { AccountStore, LOCAL_OUTBOX } from './accounts';
import { BatchStore, checkPartPath, fillTemplate, type MessageDraft, type PartInput } from './batch';
import { confirmSend } from './confirm';
import { notify as sendNotification } from './notify';
import { emailError } from './errors';
import type * as S from './schemas';
import { TagStore } from './tags';
import { classify, smtpDelivery } from './transport';

/** The e-mail methods' bodies. Every store lives in the plugin data dir; no result carries a secret. */

type Ctx = Pick<MethodContext, 'signal' | 'dataDir' | 'secrets'> & { log?: MethodContext['log']; now?: () => Date };
type In<T extends z.ZodType> = z.output<T>;
type Out<T extends z.ZodType> = z.input<T>;

type Stores = { accounts: AccountStore; tags: TagStore; batches: BatchStore };
/** The stores of each data dir, made once: they hold only their file paths (every read goes to the files). */
const storesByDir = new Map<string, Stores>();
const stores = (ctx: Ctx): Stores => {
  let found = storesByDir.get(ctx.dataDir);
  if (!found) {
    found = { accounts: new AccountStore(ctx.dataDir, ctx.secrets), tags: new TagStore(ctx.dataDir), batches: new BatchStore(ctx.dataDir) };
    storesByDir.set(ctx.dataDir, found);
  }
  return found;
};

export async function accountSave(input: In<typeof S.AccountSaveInput>, ctx: Ctx): Promise<Out<typeof S.AccountSaveOutput>> {
  const { secret, secretFile, verify, ...account } = input;
  const { accounts } = stores(ctx);
  const saved = await accounts.save(account, secretFile ? await readSecretFile(secretFile) : secret);
  let verified: boolean | null = null;
  let verifyError: string | undefined;
  if (verify) {
    const stored = await accounts.secretOf(saved.id);
    const d = smtpDelivery(saved, stored);
    try {
      await d.verify();
      verified = true;
    } catch (e) {
      verified = false;
      verifyError = classify(e, stored).message;
    } finally {
      d.close();
    }
  }
  const summary = `Saved account ${saved.id} (${saved.from} via ${saved.host}:${saved.port}, ${saved.tls})${verified === null ? '' : verified ? '; login checked' : `; check failed: ${verifyError}`}.`;
  return { success: true, summary, account: saved, verified, ...(verifyError ? { verifyError } : {}) };
}

async function readSecretFile(path: string): Promise<string> {
  const file = checkPartPath(path, 'secretFile');
  const text = await readFile(file, 'utf8').catch(() => {
    throw emailError('email_secret_file_unreadable', { path: file });
  });
  const secret = text.split(/\r?\n/)[0]?.trim() ?? '';
  if (!secret || secret.length > 1000) throw emailError('email_secret_file_unreadable', { path: file });
  return secret;
}

/** Synchronous (the read tool a chain calls most): its answer leaves without a promise round trip. */
export function accountsList(_input: unknown, ctx: Ctx): Out<typeof S.AccountsListOutput> {
  const accounts = stores(ctx).accounts.listNow();
  return {
    success: true,
    summary: `${accounts.length} account(s): ${accounts.map((a) => a.id).join(', ')}`,
    accounts,
    options: accounts.map((a) => ({ value: a.id, label: a.kind === 'outbox' ? a.name : `${a.name} <${a.from}>` })),
  };
}

export async function accountDelete(input: In<typeof S.AccountDeleteInput>, ctx: Ctx): Promise<Out<typeof S.AccountDeleteOutput>> {
  const removed = await stores(ctx).accounts.remove(input.id);
  return { success: true, summary: removed ? `Removed account ${input.id}.` : `There was no account ${input.id}.`, removed };
}

export async function tagSave(input: In<typeof S.TagSaveInput>, ctx: Ctx): Promise<Out<typeof S.TagSaveOutput>> {
  const tag = await stores(ctx).tags.save(input);
  return { success: true, summary: `Saved group "${tag.name}" with ${tag.recipients.length} recipient(s).`, tag };
}

export async function tagsList(_input: unknown, ctx: Ctx): Promise<Out<typeof S.TagsListOutput>> {
  const tags = await stores(ctx).tags.list();
  return {
    success: true,
    summary: `${tags.length} recipient group(s)`,
    tags: tags.map((t) => ({ ...t, count: t.recipients.length })),
    options: tags.map((t) => ({ value: t.name, label: `${t.name} (${t.recipients.length})` })),
  };
}

export async function sendBatch(input: In<typeof S.SendBatchInput>, ctx: Ctx): Promise<Out<typeof S.SendBatchOutput>> {
  const { accounts, tags, batches } = stores(ctx);
  const account = await accounts.get(input.accountId);
  const parts: PartInput[] = input.files.map((f, i) => (typeof f === 'string' ? { path: checkPartPath(f, `files[${i}]`) } : { ...f, path: checkPartPath(f.path, `files[${i}].path`) }));
  const base = input.recipients ? await tags.expand(input.recipients) : [];
  const cc = input.cc ? await tags.expand(input.cc) : [];
  const drafts: MessageDraft[] = [];
  for (const [i, part] of parts.entries()) {
    const value = part.value ?? null;
    const extra = value !== null && input.recipientsByValue?.[value] ? await tags.expand(input.recipientsByValue[value] as string | string[]) : [];
    const to = [...new Set([...base, ...extra])];
    if (to.length === 0) throw emailError('email_no_recipients', { index: i + 1, value: value ?? basename(part.path) });
    const name = part.name?.trim() || basename(part.path);
    const vars = { value: value ?? '', name, rowCount: part.rowCount ?? '', index: i + 1, count: parts.length };
    drafts.push({ part, to, cc, subject: fillTemplate(input.subject, vars), text: fillTemplate(input.body, vars) });
  }
  const batch = await batches.prepare(account.id, drafts, (ctx.now ?? (() => new Date()))());
  const preview = batch.messages.map((m) => ({ index: m.index, value: m.value, to: m.to, cc: m.cc, subject: m.subject, attachment: m.attachment ? { name: m.attachment.name, bytes: m.attachment.bytes } : null }));
  const where = account.id === LOCAL_OUTBOX ? 'the local outbox' : `${account.from} via ${account.host}`;
  const summary = `Prepared ${preview.length} message(s) from ${where}; nothing is sent until confirm_send with ${batch.confirmationId}: ${preview.map((p) => `${p.subject} → ${p.to.join(', ')}`).join('; ')}`;
  return {
    success: true,
    summary,
    confirmation: { confirmationId: batch.confirmationId, messageCount: preview.length, accountId: account.id, from: account.from, createdAt: batch.createdAt },
    preview,
  };
}

export async function confirm(input: In<typeof S.ConfirmInput>, ctx: Ctx): Promise<Out<typeof S.ConfirmOutput>> {
  const { accounts, batches } = stores(ctx);
  return confirmSend(input.confirmationId, { accounts, batches, now: ctx.now ?? (() => new Date()), signal: ctx.signal, log: ctx.log ? (l, m) => ctx.log?.(l, m) : undefined });
}

/** A host notification (not an AI tool): one plain message. */
export function notify(input: In<typeof S.NotifyInput>, ctx: Ctx): Promise<Out<typeof S.NotifyOutput>> {
  return sendNotification(input, { accounts: stores(ctx).accounts });
}
