import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import * as H from '../src/handlers';
import * as S from '../src/schemas';
import { memorySecrets } from './memory-secrets';
import { attachmentsOf, headerOf, type SmtpFixture, startDropProxy, startSmtp } from './smtp-fixture';

const SECRET = 's3cret-Pa55word!';
let root: string;
let dataDir: string;
let vault: ReturnType<typeof memorySecrets>;
let ctx: { signal: AbortSignal; dataDir: string; log: (l: string, m: string) => void; secrets: ReturnType<typeof memorySecrets> };
const logs: string[] = [];
let files: Array<{ name: string; path: string; value: string; rowCount: number }>;

const codeOf = async (p: Promise<unknown>) => {
  try {
    await p;
  } catch (e) {
    return (e as { data?: { code?: string } }).data?.code ?? (e as Error).message;
  }
  return 'no error';
};
const saveAccount = (port: number, extra: Record<string, unknown> = {}) =>
  H.accountSave(S.AccountSaveInput.parse({ id: 'office', name: 'Office', from: 'office@example.com', host: '127.0.0.1', port, tls: 'none', ...extra }), ctx);
const prepare = (accountId: string, more: Record<string, unknown> = {}) =>
  H.sendBatch(S.SendBatchInput.parse({ accountId, recipients: 'team', subject: 'Invoices {value}', body: '{rowCount} rows', files, ...more }), ctx);

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'fy-email-'));
  files = [];
  for (const [i, value] of ['East', 'North', 'South', 'West'].entries()) {
    const path = join(root, `invoices-${value}.xlsx`);
    await writeFile(path, `PK fake workbook ${value}`);
    files.push({ name: `invoices-${value}.xlsx`, path, value, rowCount: 10 + i });
  }
});
afterAll(() => rm(root, { recursive: true, force: true }));
beforeEach(async () => {
  dataDir = await mkdtemp(join(root, 'data-'));
  logs.length = 0;
  vault = memorySecrets();
  ctx = { signal: new AbortController().signal, dataDir, log: (l, m) => logs.push(`${l} ${m}`), secrets: vault };
  await H.tagSave(S.TagSaveInput.parse({ name: 'team', recipients: ['a@example.com', 'b@example.com'] }), ctx);
});

describe('accounts and groups', () => {
  it('stores the secret in the vault, never in a file, and never returns it', async () => {
    const saved = await saveAccount(2525, { user: 'office', secret: SECRET });
    expect(JSON.stringify(saved)).not.toContain(SECRET);
    expect(saved.account.hasSecret).toBe(true);
    const list = await H.accountsList({}, ctx);
    expect(list.accounts.map((a) => a.id)).toEqual(['local-outbox', 'office']);
    expect(list.options[1]).toEqual({ value: 'office', label: 'Office <office@example.com>' });
    expect(JSON.stringify(list)).not.toContain(SECRET);
    expect(await readFile(join(dataDir, 'accounts.json'), 'utf8')).not.toContain(SECRET);
    expect(vault.values.get('account/office')).toBe(SECRET);
    expect(await readdir(dataDir)).not.toContain('secrets.json');
    // Updating without a secret keeps it; null removes it (refused while a user needs one)
    expect((await saveAccount(2526, { user: 'office' })).account.hasSecret).toBe(true);
    expect(vault.values.get('account/office')).toBe(SECRET);
    expect(await codeOf(saveAccount(2526, { user: 'office', secret: null }))).toBe('email_account_incomplete');
    expect(vault.values.get('account/office')).toBe(SECRET);
    expect((await saveAccount(2526, { secret: null })).account.hasSecret).toBe(false);
    expect(vault.values.has('account/office')).toBe(false);
    await saveAccount(2526, { user: 'office', secret: SECRET });
    await H.accountDelete({ id: 'office' }, ctx);
    expect(vault.values.size).toBe(0);
    expect(await codeOf(H.accountSave(S.AccountSaveInput.parse({ id: 'local-outbox', name: 'x', from: 'x@example.com', host: 'h', port: 1, tls: 'none' }), ctx))).toBe('email_account_reserved');
  });

  it('lists groups as options and expands them', async () => {
    const tags = await H.tagsList({}, ctx);
    expect(tags.options).toEqual([{ value: 'team', label: 'team (2)' }]);
    expect(await codeOf(prepare('local-outbox', { recipients: 'nobody-group' }))).toBe('email_tag_not_found');
    expect(await codeOf(prepare('local-outbox', { recipients: 'bad@@x' }))).toBe('email_bad_recipient');
    expect(await codeOf(prepare('ghost'))).toBe('email_account_not_found');
    expect(await codeOf(prepare('local-outbox', { files: [{ path: join(root, 'missing.xlsx') }] }))).toBe('email_attachment_missing');
    expect(await codeOf(prepare('local-outbox', { files: ['relative.xlsx'] }))).toBe('email_path_not_absolute');
  });
});

describe('send batch → confirm', () => {
  let smtp: SmtpFixture;
  beforeAll(async () => {
    smtp = await startSmtp({ users: { office: SECRET } });
  });
  afterAll(() => smtp.close());

  it('prepares without sending, sends once per confirmation, and never twice', async () => {
    await saveAccount(smtp.port, { user: 'office', secret: SECRET });
    const before = smtp.messages.length;
    const batch = await prepare('office', { recipientsByValue: { North: 'north@example.com' } });
    expect(batch.preview.map((p) => p.subject)).toEqual(['Invoices East', 'Invoices North', 'Invoices South', 'Invoices West']);
    expect(batch.preview[1]?.to).toEqual(['a@example.com', 'b@example.com', 'north@example.com']);
    expect(smtp.messages.length).toBe(before);
    const id = batch.confirmation.confirmationId;
    const first = await H.confirm({ confirmationId: id }, ctx);
    expect(first).toMatchObject({ success: true, sent: 4, alreadySent: 0 });
    const got = smtp.messages.slice(before);
    expect(got.length).toBe(4);
    expect(got.map((m) => attachmentsOf(m.raw)[0]?.content.toString())).toEqual(['PK fake workbook East', 'PK fake workbook North', 'PK fake workbook South', 'PK fake workbook West']);
    expect(got[1]?.to).toEqual(['a@example.com', 'b@example.com', 'north@example.com']);
    expect(headerOf(got[0]?.raw as Buffer, 'Subject')).toBe('Invoices East');
    const second = await H.confirm({ confirmationId: id }, ctx);
    expect(second).toMatchObject({ success: true, sent: 0, alreadySent: 4 });
    expect(smtp.messages.length).toBe(before + 4);
    expect(logs.join('\n') + JSON.stringify([first, second])).not.toContain(SECRET);
    expect(await codeOf(H.confirm({ confirmationId: 'cf_nope' }, ctx))).toBe('email_confirmation_not_found');
  });

  it('reports a refused login and sends nothing', async () => {
    await saveAccount(smtp.port, { user: 'office', secret: 'wrong-password' });
    const before = smtp.messages.length;
    const batch = await prepare('office');
    const r = await H.confirm({ confirmationId: batch.confirmation.confirmationId }, ctx);
    expect(r.success).toBe(false);
    expect(r.notSent).toBe(4);
    expect(r.error).toMatch(/refused the login/);
    expect(JSON.stringify(r)).not.toContain('wrong-password');
    expect(smtp.messages.length).toBe(before);
  });

  it('after a dropped connection says what was sent, and a second confirm sends only the rest', async () => {
    const proxy = await startDropProxy(smtp.port, 3);
    try {
      await saveAccount(proxy.port, { user: 'office', secret: SECRET });
      const before = smtp.messages.length;
      const batch = await prepare('office');
      const id = batch.confirmation.confirmationId;
      const r = await H.confirm({ confirmationId: id }, ctx);
      expect(r.success).toBe(false);
      expect(r.messages.map((m) => m.status)).toEqual(['sent', 'sent', 'failed', 'not-sent']);
      expect(r.summary).toContain('Sent: #1 East, #2 North');
      expect(smtp.messages.length).toBe(before + 2);
      proxy.dropAtData = 0;
      const again = await H.confirm({ confirmationId: id }, ctx);
      expect(again).toMatchObject({ success: true, sent: 2, alreadySent: 2 });
      expect(again.messages.map((m) => m.status)).toEqual(['already-sent', 'already-sent', 'sent', 'sent']);
      const subjects = smtp.messages.slice(before).map((m) => headerOf(m.raw, 'Subject'));
      expect(subjects).toEqual(['Invoices East', 'Invoices North', 'Invoices South', 'Invoices West']);
    } finally {
      await proxy.close();
    }
  });
});

describe('local outbox', () => {
  it('writes one .eml per message into the data dir, once', async () => {
    const batch = await prepare('local-outbox');
    const r = await H.confirm({ confirmationId: batch.confirmation.confirmationId }, ctx);
    expect(r).toMatchObject({ success: true, sent: 4 });
    const again = await H.confirm({ confirmationId: batch.confirmation.confirmationId }, ctx);
    const eml = (await readdir(join(dataDir, 'outbox'))).sort();
    expect(eml.length).toBe(4);
    // each message names its .eml (also when it was sent before), so the UI can offer it
    for (const report of [r, again]) expect(report.messages.map((m) => m.file?.path).sort()).toEqual(eml.map((f) => join(dataDir, 'outbox', f)));
    expect(S.ConfirmOutput.parse(r).messages[0]?.file?.name).toMatch(/\.eml$/);
    const raw = await readFile(join(dataDir, 'outbox', eml[0] as string));
    expect(attachmentsOf(raw)[0]).toMatchObject({ filename: 'invoices-East.xlsx' });
    expect(headerOf(raw, 'To')).toBe('a@example.com, b@example.com');
  });
});

describe('passwords an earlier version kept in secrets.json', () => {
  it('are moved into the vault on first use, and the file removed', async () => {
    await writeFile(join(dataDir, 'accounts.json'), JSON.stringify([{ id: 'office', name: 'Office', from: 'office@example.com', host: '127.0.0.1', port: 2525, tls: 'none', user: 'office' }]));
    await writeFile(join(dataDir, 'secrets.json'), JSON.stringify({ office: SECRET }), { mode: 0o600 });
    const list = await H.accountsList({}, ctx);
    expect(list.accounts[1]?.hasSecret).toBe(true);
    const saved = await saveAccount(2525, { user: 'office' });
    expect(saved.account.hasSecret).toBe(true);
    expect(vault.values.get('account/office')).toBe(SECRET);
    expect(await readdir(dataDir)).not.toContain('secrets.json');
    expect(await readFile(join(dataDir, 'accounts.json'), 'utf8')).not.toContain(SECRET);
  });
});

describe('secret from a file', () => {
  it('reads the first line of a granted file, so the secret never appears in tool arguments', async () => {
    const file = join(root, 'secret.txt');
    await writeFile(file, `${SECRET}\n`);
    const saved = await saveAccount(2525, { user: 'office', secretFile: file });
    expect(saved.account.hasSecret).toBe(true);
    expect(vault.values.get('account/office')).toBe(SECRET);
    expect(await codeOf(saveAccount(2525, { user: 'office', secretFile: join(root, 'nope.txt') }))).toBe('email_secret_file_unreadable');
  });
});

describe('retention and cancellation', () => {
  it('removes batches older than 30 days when a new one is prepared', async () => {
    const old = await H.sendBatch(S.SendBatchInput.parse({ accountId: 'local-outbox', recipients: 'team', files: [files[0]?.path] }), { ...ctx, now: () => new Date(Date.UTC(2026, 0, 1)) });
    const fresh = await H.sendBatch(S.SendBatchInput.parse({ accountId: 'local-outbox', recipients: 'team', files: [files[0]?.path] }), { ...ctx, now: () => new Date(Date.UTC(2026, 1, 15)) });
    expect(await codeOf(H.confirm({ confirmationId: old.confirmation.confirmationId }, ctx))).toBe('email_confirmation_not_found');
    expect((await H.confirm({ confirmationId: fresh.confirmation.confirmationId }, ctx)).sent).toBe(1);
  });

  it('a cancelled confirm sends nothing and leaves every message pending', async () => {
    const batch = await prepare('local-outbox');
    const ac = new AbortController();
    ac.abort();
    const r = await H.confirm({ confirmationId: batch.confirmation.confirmationId }, { ...ctx, signal: ac.signal });
    expect(r).toMatchObject({ success: false, sent: 0, notSent: 4 });
    expect((await H.confirm({ confirmationId: batch.confirmation.confirmationId }, ctx)).sent).toBe(4);
  });
});
