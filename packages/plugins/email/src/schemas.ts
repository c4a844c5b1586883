import { z } from 'zod';
import { AccountSchema, TLS_MODES } from './accounts';
import { TagSchema } from './tags';

/** Input and output schemas of the e-mail methods (rpc.methods are generated from them). */

const PublicAccount = AccountSchema.extend({ kind: z.enum(['smtp', 'outbox']), hasSecret: z.boolean() });
const Option = z.object({ value: z.string(), label: z.string() });

export const AccountSaveInput = AccountSchema.extend({
  secret: z.string().min(1).max(1000).nullable().optional().meta({ writeOnly: true, description: 'Password or app token; omit to keep the stored one, null to remove it. Never returned; the host redacts it in run events.' }),
  secretFile: z
    .string({ error: (iss) => (iss.input !== null && typeof iss.input === 'object' ? 'a file reference object the host did not resolve; pass a granted file path' : undefined) })
    .min(1)
    .optional()
    .meta({ format: 'fengyu-file' })
    .describe('A granted file holding the secret (first line). Preferred over "secret": run logs record tool arguments, but not file contents.'),
  verify: z.boolean().default(false).describe('Connect and log in once to check the settings'),
});
export const AccountSaveOutput = z.object({
  success: z.literal(true),
  summary: z.string(),
  account: PublicAccount,
  verified: z.boolean().nullable(),
  verifyError: z.string().optional(),
});

export const AccountsListInput = z.object({});
export const AccountsListOutput = z.object({ success: z.literal(true), summary: z.string(), accounts: z.array(PublicAccount), options: z.array(Option) });

export const AccountDeleteInput = z.object({ id: z.string().min(1) });
export const AccountDeleteOutput = z.object({ success: z.literal(true), summary: z.string(), removed: z.boolean() });

export const TagSaveInput = TagSchema;
export const TagSaveOutput = z.object({ success: z.literal(true), summary: z.string(), tag: TagSchema });

export const TagsListInput = z.object({});
export const TagsListOutput = z.object({
  success: z.literal(true),
  summary: z.string(),
  tags: z.array(TagSchema.extend({ count: z.number().int() })),
  options: z.array(Option),
});

const fileRefError = (iss: { input?: unknown }) =>
  iss.input !== null && typeof iss.input === 'object' ? 'a file reference object the host did not resolve; pass a granted file path' : undefined;

const Part = z.union([
  z.string({ error: fileRefError }).min(1).describe('Absolute path of a granted file'),
  z
    .object({
      path: z.string({ error: fileRefError }).min(1),
      name: z.string().max(200).optional(),
      value: z.string().nullable().optional(),
      rowCount: z.number().int().optional(),
    })
    .describe('A part as excel_execute returns it: {name, path, value, rowCount}'),
]);
const Recipients = z.union([z.string().min(1), z.array(z.string().min(1)).min(1).max(500)]);

export const SendBatchInput = z.object({
  accountId: z.string().min(1).describe('Account to send from (see email_accounts_list); "local-outbox" writes .eml files'),
  recipients: Recipients.optional().describe('Addresses and/or recipient groups (email_tags_list) every message goes to'),
  recipientsByValue: z.record(z.string(), Recipients).optional().describe('Per split value, extra addresses/groups, e.g. {"North": "North sales"}'),
  cc: Recipients.optional(),
  subject: z.string().min(1).max(500).default('{name}').describe('Subject template: {value}, {name}, {rowCount}, {index}, {count}'),
  body: z.string().max(100_000).default('Attached: {name} ({rowCount} rows).').describe('Plain-text body template (same placeholders)'),
  files: z.array(Part).min(1).max(500).describe('One message per file, e.g. {{node.execute.result.files}}'),
});
const PreviewItem = z.object({
  index: z.number().int(),
  value: z.string().nullable(),
  to: z.array(z.string()),
  cc: z.array(z.string()),
  subject: z.string(),
  attachment: z.object({ name: z.string(), bytes: z.number().int() }).nullable(),
});
export const SendBatchOutput = z.object({
  success: z.literal(true),
  summary: z.string(),
  confirmation: z.object({ confirmationId: z.string(), messageCount: z.number().int(), accountId: z.string(), from: z.string(), createdAt: z.string() }),
  preview: z.array(PreviewItem),
});

export const ConfirmInput = z.object({ confirmationId: z.string().min(1).describe('confirmation.confirmationId from email_send_batch') });
export const ConfirmOutput = z.object({
  success: z.boolean(),
  summary: z.string(),
  error: z.string().optional(),
  confirmationId: z.string(),
  accountId: z.string(),
  sent: z.number().int(),
  alreadySent: z.number().int(),
  failed: z.number().int(),
  notSent: z.number().int(),
  messages: z.array(
    z.object({
      index: z.number().int(),
      value: z.string().nullable(),
      to: z.array(z.string()),
      subject: z.string(),
      status: z.enum(['sent', 'already-sent', 'failed', 'not-sent']),
      messageId: z.string(),
      error: z.string().optional(),
      file: z.object({ name: z.string(), path: z.string() }).optional().describe('The .eml file the local outbox wrote for this message'),
    }),
  ),
});

export { TLS_MODES };

export const NotifyInput = z.object({
  accountId: z.string().min(1),
  to: z.array(z.string().email()).min(1).max(20),
  subject: z.string().min(1).max(500),
  body: z.string().max(20_000),
});
export const NotifyOutput = z.object({ success: z.boolean(), messageId: z.string(), error: z.string().optional() });
