import { open, rm, stat, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import { type AccountStore, LOCAL_OUTBOX } from './accounts';
import type { BatchStore, PreparedBatch, PreparedMessage } from './batch';
import { emailError } from './errors';
import { classify, type Delivery, outboxDelivery, outboxFile, smtpDelivery } from './transport';

/**
 * `confirm_send`: sends the messages of a prepared batch that are not sent yet, one at a time,
 * persisting each message's status as soon as the server accepted it. So a batch is sent at most
 * once per message: a second confirm of the same id sends nothing new; after a dropped connection
 * the result names what was sent, and confirming again sends only the rest. A connection-level
 * failure (refused login, dropped or unreachable server) stops the batch, and the remaining
 * messages stay pending; a failure of one message (e.g. a rejected recipient) is recorded and the
 * batch goes on. A message whose connection dropped before the server's "250 OK" counts as not
 * sent (it keeps its Message-ID, so a resend can be recognised by the receiver).
 */

export type ReportStatus = 'sent' | 'already-sent' | 'failed' | 'not-sent';

export interface ConfirmReport {
  success: boolean;
  summary: string;
  error?: string;
  confirmationId: string;
  accountId: string;
  sent: number;
  alreadySent: number;
  failed: number;
  notSent: number;
  /** `file`: the `.eml` the local outbox wrote for a sent message (the host lets the run's owner download it). */
  messages: Array<{ index: number; value: string | null; to: string[]; subject: string; status: ReportStatus; messageId: string; error?: string; file?: { name: string; path: string } }>;
}

export interface ConfirmDeps {
  accounts: AccountStore;
  batches: BatchStore;
  now: () => Date;
  signal?: AbortSignal;
  log?: (level: 'info' | 'warn', message: string) => void;
}

export async function confirmSend(confirmationId: string, deps: ConfirmDeps): Promise<ConfirmReport> {
  await deps.batches.load(confirmationId); // unknown id → clear error before any lock file
  const held = await lock(deps.batches.dirOf(confirmationId), confirmationId, deps.now);
  try {
    // Re-read under the lock: another confirm may have finished in between.
    return await sendPending(await deps.batches.load(confirmationId), deps, held.touch);
  } finally {
    await held.release();
  }
}

async function sendPending(batch: PreparedBatch, deps: ConfirmDeps, touch: () => Promise<void>): Promise<ConfirmReport> {
  const account = await deps.accounts.get(batch.accountId);
  const secret = account.kind === 'smtp' ? await deps.accounts.secretOf(account.id) : undefined;
  const earlier = new Set(batch.messages.filter((m) => m.status === 'sent').map((m) => m.index));
  const status = new Map<number, ReportStatus>();
  let stopError: string | undefined;
  const todo = batch.messages.filter((m) => m.status !== 'sent');
  if (todo.length) {
    const delivery: Delivery = account.id === LOCAL_OUTBOX ? outboxDelivery(deps.accounts.outboxDir) : smtpDelivery(account, secret);
    // A cancelled run closes the connection: the message in flight fails (and stays unsent).
    const onAbort = () => delivery.close();
    deps.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await delivery.verify();
    } catch (e) {
      stopError = classify(e, secret).message;
    }
    for (const m of todo) {
      if (stopError) break;
      if (deps.signal?.aborted) {
        stopError = emailError('email_cancelled').message;
        break;
      }
      m.attempts++;
      try {
        await delivery.send(outgoing(account, batch, m), stemOf(batch, m));
        m.status = 'sent';
        m.sentAt = deps.now().toISOString();
        delete m.error;
        status.set(m.index, 'sent');
      } catch (e) {
        const f = classify(e, secret);
        m.status = 'failed';
        m.error = f.message;
        status.set(m.index, 'failed');
        if (f.connection) stopError = f.message;
      }
      await deps.batches.save(batch);
      await touch();
    }
    deps.signal?.removeEventListener('abort', onAbort);
    delivery.close();
  }
  return report(batch, earlier, status, stopError, deps);
}

const stemOf = (batch: PreparedBatch, m: PreparedMessage) => `${batch.confirmationId}-${String(m.index).padStart(3, '0')}`;

function outgoing(account: { name: string; from: string }, batch: PreparedBatch, m: PreparedMessage) {
  return {
    from: { name: account.name, address: account.from },
    to: m.to,
    cc: m.cc,
    subject: m.subject,
    text: m.text,
    messageId: m.messageId,
    headers: { 'X-FengYu-Confirmation': `${batch.confirmationId}; part=${m.index}` },
    attachment: m.attachment ? { name: m.attachment.name, path: m.attachment.path } : null,
  };
}

function report(batch: PreparedBatch, earlier: Set<number>, now: Map<number, ReportStatus>, stopError: string | undefined, deps: ConfirmDeps): ConfirmReport {
  const messages = batch.messages.map((m) => {
    const s: ReportStatus = earlier.has(m.index) ? 'already-sent' : (now.get(m.index) ?? 'not-sent');
    const written = batch.accountId === LOCAL_OUTBOX && (s === 'sent' || s === 'already-sent');
    return {
      index: m.index,
      value: m.value,
      to: m.to,
      subject: m.subject,
      status: s,
      messageId: m.messageId,
      ...(s === 'failed' && m.error ? { error: m.error } : {}),
      ...(written ? { file: outboxFile(deps.accounts.outboxDir, stemOf(batch, m)) } : {}),
    };
  });
  const count = (s: ReportStatus) => messages.filter((m) => m.status === s).length;
  const sent = count('sent');
  const alreadySent = count('already-sent');
  const failed = count('failed');
  const notSent = count('not-sent');
  const total = messages.length;
  const ok = failed === 0 && notSent === 0;
  const list = (s: ReportStatus) => messages.filter((m) => m.status === s).map((m) => `#${m.index}${m.value ? ` ${m.value}` : ''}`).join(', ');
  let summary = `Sent ${sent} of ${total} message(s)${alreadySent ? `; ${alreadySent} had been sent before and were not sent again` : ''}.`;
  if (!ok) {
    summary += ` Sent: ${list('sent') || 'none'}${alreadySent ? `; sent earlier: ${list('already-sent')}` : ''}. Not sent: ${[list('failed'), list('not-sent')].filter(Boolean).join(', ')}`;
    summary += `${stopError ? ` (${stopError})` : ''}. Confirm the same id again to send only the messages not sent yet.`;
  }
  deps.log?.(ok ? 'info' : 'warn', `confirm_send ${batch.confirmationId}: sent=${sent} alreadySent=${alreadySent} failed=${failed} notSent=${notSent}`);
  return { success: ok, summary, ...(ok ? {} : { error: summary }), confirmationId: batch.confirmationId, accountId: batch.accountId, sent, alreadySent, failed, notSent, messages };
}

/**
 * One confirm at a time per batch: a lock file (`send.lock`) created exclusively and touched after
 * every message. A lock untouched for LOCK_STALE_MS belongs to a worker that died and is taken over
 * (pids are no proof here: sandboxed workers each run in their own pid namespace).
 */
export const LOCK_STALE_MS = 120_000;

async function lock(dir: string, id: string, now: () => Date): Promise<{ touch(): Promise<void>; release(): Promise<void> }> {
  const file = join(dir, 'send.lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fh = await open(file, 'wx');
      await fh.close();
      return {
        touch: () => utimes(file, now(), now()).catch(() => {}),
        release: () => rm(file, { force: true }),
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      const info = await stat(file).catch(() => null);
      if (info && now().getTime() - info.mtimeMs < LOCK_STALE_MS) throw emailError('email_confirm_in_progress', { confirmationId: id });
      await rm(file, { force: true });
    }
  }
  throw emailError('email_confirm_in_progress', { confirmationId: id });
}
