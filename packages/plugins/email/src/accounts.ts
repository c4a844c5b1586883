import { join } from 'node:path';
import { z } from 'zod';
import { emailError } from './errors';
import { readJsonCached, writeJson } from './json-store';

/**
 * E-mail accounts, kept in the plugin data dir: `accounts.json` holds the public part,
 * `secrets.json` (mode 0600) the passwords. No function here returns a secret except
 * `secretOf`, which only the transport uses. The built-in `local-outbox` account writes `.eml`
 * files into `<data>/outbox` instead of talking to a server.
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
  private readonly secretsFile: string;
  readonly outboxDir: string;

  constructor(dataDir: string) {
    this.accountsFile = join(dataDir, 'accounts.json');
    this.secretsFile = join(dataDir, 'secrets.json');
    this.outboxDir = join(dataDir, 'outbox');
  }

  async list(): Promise<PublicAccount[]> {
    return this.listNow();
  }

  /** `list`, answered without a promise (the files are read synchronously, from the cache while unchanged). */
  listNow(): PublicAccount[] {
    const accounts = readJsonCached<Account[]>(this.accountsFile, []);
    if (accounts.length === 0) return [outboxAccount()];
    const secrets = readJsonCached<Record<string, string>>(this.secretsFile, {});
    return [outboxAccount(), ...accounts.map((a) => ({ ...a, kind: 'smtp' as const, hasSecret: typeof secrets[a.id] === 'string' }))];
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
    const accounts = readJsonCached<Account[]>(this.accountsFile, []).filter((a) => a.id !== account.id);
    accounts.push(account);
    accounts.sort((a, b) => a.id.localeCompare(b.id));
    const secrets = readJsonCached<Record<string, string>>(this.secretsFile, {});
    if (secret === null) delete secrets[account.id];
    else if (typeof secret === 'string') secrets[account.id] = secret;
    if (account.user && typeof secrets[account.id] !== 'string') throw emailError('email_account_incomplete', { accountId: account.id, field: 'a secret (password) for its user' });
    await writeJson(this.secretsFile, secrets, 0o600);
    await writeJson(this.accountsFile, accounts);
    return this.get(account.id);
  }

  async remove(id: string): Promise<boolean> {
    if (id === LOCAL_OUTBOX) throw emailError('email_account_reserved', { accountId: id });
    const accounts = readJsonCached<Account[]>(this.accountsFile, []);
    const kept = accounts.filter((a) => a.id !== id);
    const secrets = readJsonCached<Record<string, string>>(this.secretsFile, {});
    delete secrets[id];
    await writeJson(this.secretsFile, secrets, 0o600);
    await writeJson(this.accountsFile, kept);
    return kept.length !== accounts.length;
  }

  /** The stored password of an account (transport only; never put it in a result or a log). */
  async secretOf(id: string): Promise<string | undefined> {
    return readJsonCached<Record<string, string>>(this.secretsFile, {})[id];
  }
}
