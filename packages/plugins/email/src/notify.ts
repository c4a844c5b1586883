import { randomUUID } from 'node:crypto';
import type { AccountStore } from './accounts';
import { LOCAL_OUTBOX } from './accounts';
import { classify, type Delivery, outboxDelivery, smtpDelivery } from './transport';

/**
 * One plain-text message with no attachment and no confirmation step: what the host sends on its
 * own behalf (an inbox notification), never offered to a model (it is not an AI tool).
 */

export interface NotifyInput {
  accountId: string;
  to: string[];
  subject: string;
  body: string;
}

export async function notify(input: NotifyInput, deps: { accounts: AccountStore; domain?: string }): Promise<{ success: boolean; messageId: string; error?: string }> {
  const account = await deps.accounts.get(input.accountId);
  const secret = account.kind === 'smtp' ? await deps.accounts.secretOf(account.id) : undefined;
  const delivery: Delivery = account.id === LOCAL_OUTBOX ? outboxDelivery(deps.accounts.outboxDir) : smtpDelivery(account, secret);
  const messageId = `<${randomUUID()}@fengyu.local>`;
  try {
    await delivery.send(
      { from: { name: account.name, address: account.from }, to: input.to, cc: [], subject: input.subject, text: input.body, messageId, headers: { 'X-FengYu-Notification': 'inbox' }, attachment: null },
      `notify-${messageId.slice(1, 9)}`,
    );
    return { success: true, messageId };
  } catch (e) {
    return { success: false, messageId, error: classify(e, secret).message };
  } finally {
    delivery.close();
  }
}
