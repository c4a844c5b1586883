import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

/**
 * AES-256-GCM through node:crypto, nothing home-made. A sealed value is one text:
 * `v1.<key id>.<iv>.<tag>.<ciphertext>` (base64url parts; a 96-bit random IV per value, a 128-bit
 * tag). The additional data binds the value to its row (owner and name), so a ciphertext copied
 * to another row or owner does not open. The key id is a digest of the key (never the key): it
 * tells "wrong key" from "damaged value" at start-up.
 */

export const KEY_BYTES = 32;

export interface SecretsKey {
  readonly bytes: Buffer;
  /** 16 hex characters of SHA-256 over a label and the key: which key sealed a value. */
  readonly id: string;
}

export function keyFrom(bytes: Buffer): SecretsKey {
  if (bytes.length !== KEY_BYTES) throw new Error(`a key has ${KEY_BYTES} bytes, not ${bytes.length}`);
  return { bytes, id: createHash('sha256').update('fengyu-secrets-key-id\0').update(bytes).digest('hex').slice(0, 16) };
}

export function newKey(): SecretsKey {
  return keyFrom(randomBytes(KEY_BYTES));
}

/** A key's text form (64 hex characters), as the key file holds it. */
export function keyText(key: SecretsKey): string {
  return key.bytes.toString('hex');
}

/** Parses a key written as 64 hex characters or as base64 of 32 bytes; throws with the reason. */
export function parseKey(text: string): SecretsKey {
  const t = text.trim();
  if (/^[0-9a-fA-F]{64}$/.test(t)) return keyFrom(Buffer.from(t, 'hex'));
  if (/^[A-Za-z0-9+/_-]{43}=?$/.test(t)) {
    const bytes = Buffer.from(t, t.includes('-') || t.includes('_') ? 'base64url' : 'base64');
    if (bytes.length === KEY_BYTES) return keyFrom(bytes);
  }
  throw new Error(`expected 64 hexadecimal characters or base64 of ${KEY_BYTES} bytes (got ${t.length} characters)`);
}

const aad = (owner: string, name: string) => Buffer.from(`${owner}\0${name}`, 'utf8');

export function seal(key: SecretsKey, owner: string, name: string, value: string): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key.bytes, iv);
  cipher.setAAD(aad(owner, name));
  const ct = Buffer.concat([cipher.update(value, 'utf8'), cipher.final()]);
  return ['v1', key.id, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), ct.toString('base64url')].join('.');
}

/** The id of the key that sealed `sealed`, or undefined for text that is not a sealed value. */
export function sealedKeyId(sealed: string): string | undefined {
  const parts = sealed.split('.');
  return parts.length === 5 && parts[0] === 'v1' ? parts[1] : undefined;
}

/** Opens a sealed value; throws when the key, the row or the text does not match (GCM's check). */
export function open(key: SecretsKey, owner: string, name: string, sealed: string): string {
  const [v, , iv, tag, ct] = sealed.split('.');
  if (v !== 'v1' || iv === undefined || tag === undefined || ct === undefined) throw new Error('not a sealed value');
  const decipher = createDecipheriv('aes-256-gcm', key.bytes, Buffer.from(iv, 'base64url'));
  decipher.setAAD(aad(owner, name));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(ct, 'base64url')), decipher.final()]).toString('utf8');
}
