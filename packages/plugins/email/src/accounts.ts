import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { PluginSecrets } from '@fengyu/plugin-sdk';
import { z } from 'zod';
import { emailError } from './errors';
import { readJsonCached, writeJson } from './json-store';

/**
 * E-mail accounts: `accounts.json` in the plugin data dir holds the public part; the passwords
 * are kept sealed in the host's vault (the worker's `secrets`, key `account/<id>`), never in a
 * file. Passwords an earlier version kept in `secrets.json` are moved into the vault on first
 * use and the file removed (moved first, removed after: a crash between the two moves them
 * again). No function here returns a secret except `secretOf`, which only the transport uses.
 * The built-in `local-outbox` account writes `.eml` files into `<data>/outbox` instead of
 * talking to a server.
 */

export const LOCAL_OUTBOX = 'local-outbox';
export const TLS_MODES = ['none', 'starttls', 'tls'] as const;

export const AccountSchema = z.object({
  id: z.string().regex(/^[a-z0-9][a-z0-9._-]{0,63}$/).describe('Stable id (lower case, digits, . _ -)'),
  name: z.string().min(1).max(100).describe('Display name, also the sender name'),
  from: z.email().describe('Sender address'),
  host: z.string().min(1).max(255),
  port: z.number().int().min(1).max(65535),
  tls: z.enum(TLS_MODES).describe('none: plain SMTP; starttls: upgrade required; tls: implicit TLS (usually port 465)'),
  user: z.string().max(320).optional(),
  allowSelfSigned: z.boolean().optional().describe('Accept a server certificate that is not trusted (local servers only)'),
});

export type Account = z.infer<typeof AccountSchema>;
/** What `accounts.json` keeps of an account: its public part and whether a password is stored. */
type StoredAccount = Account & { hasSecret?: boolean };
const secretKey = (id: string) => `account/${id}`;
export type PublicAccount = Account & { kind: 'smtp' | 'outbox'; hasSecret: boolean };

const outboxAccount = (): PublicAccount => ({
  id: LOCAL_OUTBOX,
  name: 'Local outbox (.eml files)',
  from: 'fengyu@localhost.localdomain',
  host: 'localhost',
  port: 25,
  tls: 'none',
  kind: 'outbox',
  hasSecret: false,
});

export class AccountStore {
  private readonly accountsFile: string;
  /** Where an earlier version kept the passwords in clear (read only to move them). */
  private readonly legacySecretsFile: string;
  readonly outboxDir: string;
  private adopted?: Promise<void>;

  constructor(
    dataDir: string,
    private readonly secrets: PluginSecrets,
  ) {
    this.accountsFile = join(dataDir, 'accounts.json');
    this.legacySecretsFile = join(dataDir, 'secrets.json');
    this.outboxDir = join(dataDir, 'outbox');
  }

  async list(): Promise<PublicAccount[]> {
    await this.adoptLegacySecrets();
    return this.listNow();
  }

  /** `list`, answered without a promise (the file is read synchronously, from the cache while unchanged). */
  listNow(): PublicAccount[] {
    const accounts = readJsonCached<StoredAccount[]>(this.accountsFile, []);
    if (accounts.length === 0) return [outboxAccount()];
    const legacy = readJsonCached<Record<string, string>>(this.legacySecretsFile, {});
    return [outboxAccount(), ...accounts.map(({ hasSecret, ...a }) => ({ ...a, kind: 'smtp' as const, hasSecret: hasSecret === true || typeof legacy[a.id] === 'string' }))];
  }

  async get(id: string): Promise<PublicAccount> {
    const all = await this.list();
    const found = all.find((a) => a.id === id);
    if (!found) throw emailError('email_account_not_found', { accountId: id, available: all.map((a) => a.id) });
    return found;
  }

  /** Creates or replaces an account; a missing `secret` keeps the stored one, `null` removes it. */
  async save(account: Account, secret: string | null | undefined): Promise<PublicAccount> {
    if (account.id === LOCAL_OUTBOX) throw emailError('email_account_reserved', { accountId: account.id });
    await this.adoptLegacySecrets();
    const accounts = readJsonCached<StoredAccount[]>(this.accountsFile, []);
    const had = accounts.find((a) => a.id === account.id)?.hasSecret === true;
    const hasSecret = secret === null ? false : typeof secret === 'string' ? true : had;
    // checked before anything is written
    if (account.user && !hasSecret) throw emailError('email_account_incomplete', { accountId: account.id, field: 'a secret (password) for its user' });
    if (secret === null && had) await this.secrets.set(secretKey(account.id), null);
    else if (typeof secret === 'string') await this.secrets.set(secretKey(account.id), secret);
    const next = accounts.filter((a) => a.id !== account.id);
    next.push({ ...account, ...(hasSecret ? { hasSecret } : {}) });
    next.sort((a, b) => a.id.localeCompare(b.id));
    await writeJson(this.accountsFile, next);
    return this.get(account.id);
  }

  async remove(id: string): Promise<boolean> {
    if (id === LOCAL_OUTBOX) throw emailError('email_account_reserved', { accountId: id });
    await this.adoptLegacySecrets();
    const accounts = readJsonCached<StoredAccount[]>(this.accountsFile, []);
    const kept = accounts.filter((a) => a.id !== id);
    if (accounts.some((a) => a.id === id && a.hasSecret)) await this.secrets.set(secretKey(id), null);
    await writeJson(this.accountsFile, kept);
    return kept.length !== accounts.length;
  }

  /** The stored password of an account (transport only; never put it in a result or a log). */
  async secretOf(id: string): Promise<string | undefined> {
    await this.adoptLegacySecrets();
    return this.secrets.get(secretKey(id));
  }

  /** Moves the passwords of `secrets.json` (earlier versions) into the vault, then removes the file; once per store. */
  private adoptLegacySecrets(): Promise<void> {
    this.adopted ??= (async () => {
      const legacy = readJsonCached<Record<string, string> | null>(this.legacySecretsFile, null);
      if (!legacy) return;
      for (const [id, value] of Object.entries(legacy)) if (typeof value === 'string' && value) await this.secrets.set(secretKey(id), value);
      const accounts = readJsonCached<StoredAccount[]>(this.accountsFile, []);
      await writeJson(this.accountsFile, accounts.map((a) => (typeof legacy[a.id] === 'string' ? { ...a, hasSecret: true } : a)));
      await rm(this.legacySecretsFile, { force: true });
    })().catch((e: unknown) => {
      this.adopted = undefined;
      throw e;
    });
    return this.adopted;
  }
}
