import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FengYuError } from '@fengyu/protocol';
import type { Db } from '../storage/database';
import { OwnerRepository } from './owner.repository';

/**
 * Tokens and owners. The primary token lives in `$FENGYU_HOME/token` (0600) and maps
 * to the owner `default`; additional owners' tokens are stored only as SHA-256 digests.
 * Verification compares in constant time (the primary token's bytes, an owner's digest): the one
 * place tokens are checked.
 */

export const DEFAULT_OWNER = 'default';

export function digest(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

/** The primary token: FENGYU_TOKEN, or the token file, created on first start. */
export function loadPrimaryToken(home: string, fixed?: string): string {
  if (fixed) return fixed;
  const file = join(home, 'token');
  if (existsSync(file)) {
    chmodSync(file, 0o600);
    const t = readFileSync(file, 'utf8').trim();
    if (t.length >= 16) return t;
  }
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const token = newToken();
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return token;
}

export class TokenVerifier {
  private readonly owners: OwnerRepository;
  /** The primary token as UTF-8 bytes. */
  private readonly primary: Buffer;

  constructor(db: Db, primaryToken: string) {
    this.owners = new OwnerRepository(db);
    this.primary = Buffer.from(primaryToken, 'utf8');
  }

  /**
   * The owner a token belongs to, or undefined: answered at once for the primary token and for a
   * token no owner can have (none, empty, oversized); an owner's token is looked up (a promise).
   */
  ownerOf(token: string | undefined): string | undefined | Promise<string | undefined> {
    if (!token || token.length > 512) return undefined;
    // The primary token's bytes are compared in constant time, with no digest to make: a token of
    // another length is compared as the primary token itself (the same work), and does not match.
    const bytes = Buffer.from(token, 'utf8');
    const sameLength = bytes.length === this.primary.length;
    if (timingSafeEqual(sameLength ? bytes : this.primary, this.primary) && sameLength) return DEFAULT_OWNER;
    // one-shot digest (no Hash object per request); the same SHA-256 as `digest`
    return this.owners.idByTokenDigest(hash('sha256', bytes, 'hex'));
  }

  /** Creates an owner with a fresh token (returned once, stored as a digest). */
  async createOwner(name: string, now: string): Promise<{ owner: string; token: string }> {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(name) || name === DEFAULT_OWNER) throw new FengYuError('invalid_request', { reason: 'owner name must match ^[A-Za-z0-9_.-]{1,64}$ and not be "default"' });
    const existing = await this.owners.exists(name);
    // An existing owner keeps its token: creating it again never rotates (and so never hijacks) it.
    if (existing) throw new FengYuError('owner_exists', { name });
    const token = newToken();
    await this.owners.insert({ id: name, name, tokenDigest: digest(token), createdAt: now });
    return { owner: name, token };
  }
}

const LOOPBACK_NAMES = new Set(['localhost', '127.0.0.1', '[::1]', '::1']);

/** True when a Host header names a loopback host (DNS-rebinding defence). */
export function isLoopbackHost(hostHeader: string | undefined): boolean {
  if (!hostHeader) return false;
  const h = hostHeader.trim().toLowerCase();
  const name = h.startsWith('[') ? h.slice(0, h.indexOf(']') + 1) : h.replace(/:\d+$/, '');
  if (LOOPBACK_NAMES.has(name)) return true;
  if (name.endsWith('.localhost')) return true;
  return /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(name);
}
