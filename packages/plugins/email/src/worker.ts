import { createWorker } from '@fengyu/plugin-sdk';
import * as H from './handlers';
import * as S from './schemas';

/** fan.summer.email — the official e-mail plugin's worker (nodemailer). */
createWorker()
  .method('email_account_save', { description: 'Create or update an SMTP account (host, port, TLS mode, user, secret). The secret is stored apart and never returned.', input: S.AccountSaveInput, output: S.AccountSaveOutput }, H.accountSave)
  .method('email_accounts_list', { description: 'List the e-mail accounts (without secrets), including the built-in local-outbox.', input: S.AccountsListInput, output: S.AccountsListOutput }, H.accountsList)
  .method('email_account_delete', { description: 'Remove an SMTP account and its stored secret.', input: S.AccountDeleteInput, output: S.AccountDeleteOutput }, H.accountDelete)
  .method('email_tag_save', { description: 'Create or replace a recipient group (a name and a list of addresses).', input: S.TagSaveInput, output: S.TagSaveOutput }, H.tagSave)
  .method('email_tags_list', { description: 'List the recipient groups.', input: S.TagsListInput, output: S.TagsListOutput }, H.tagsList)
  .method('email_send_batch', { description: 'Prepare one message per file (each with its attachment) and return a preview plus confirmation.confirmationId. Sends nothing.', input: S.SendBatchInput, output: S.SendBatchOutput }, H.sendBatch)
  .method('confirm_send', { description: 'Send a prepared batch: each message at most once; reports per-message status. Confirming again sends only the messages not sent yet.', input: S.ConfirmInput, output: S.ConfirmOutput }, H.confirm)
  .method('email_notify', { description: 'Send one plain-text message (host notifications; not offered to models).', input: S.NotifyInput, output: S.NotifyOutput }, H.notify)
  .start();
