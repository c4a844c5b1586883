import { chmodSync, closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { FengYuError } from '@fengyu/protocol';
import { keyText, parseKey, type SecretsKey } from './cipher';

/**
 * Where the secrets key lives, kept apart from the database: `FENGYU_SECRETS_KEY` (through
 * config/) or `$FENGYU_HOME/secrets.key` (mode 0600). `secrets.key.next` is a rotation's new key,
 * written before any value is sealed with it and renamed over `secrets.key` once every value is.
 */

export interface KeySource {
  /** The key text from FENGYU_SECRETS_KEY, when set. */
  envKey?: string;
  home: string;
}

export interface LoadedKeys {
  /** The configured key; undefined when neither the variable nor the file exists yet. */
  key?: SecretsKey;
  /** A rotation's new key left behind by a rotation cut short. */
  next?: SecretsKey;
  /** Where the key comes from, for messages (never the key). */
  where: string;
  fromEnv: boolean;
}

export const keyFile = (home: string) => join(home, 'secrets.key');
export const nextKeyFile = (home: string) => join(home, 'secrets.key.next');

function parseOrThrow(text: string, where: string): SecretsKey {
  try {
    return parseKey(text);
  } catch (err) {
    throw new FengYuError('secrets_key_invalid', { where, reason: (err as Error).message });
  }
}

export function loadKeys(src: KeySource): LoadedKeys {
  const file = keyFile(src.home);
  const nextPath = nextKeyFile(src.home);
  const next = existsSync(nextPath) ? parseOrThrow(readFileSync(nextPath, 'utf8'), nextPath) : undefined;
  if (src.envKey !== undefined) return { key: parseOrThrow(src.envKey, 'FENGYU_SECRETS_KEY'), ...(next ? { next } : {}), where: 'FENGYU_SECRETS_KEY', fromEnv: true };
  if (!existsSync(file)) return { ...(next ? { next } : {}), where: file, fromEnv: false };
  // a key file anyone else may read is tightened, not trusted as it is
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
  return { key: parseOrThrow(readFileSync(file, 'utf8'), file), ...(next ? { next } : {}), where: file, fromEnv: false };
}

/** Writes a key file (0600, created exclusively or replaced through a synced temp file). */
export function writeKeyFile(path: string, key: SecretsKey): void {
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    writeSync(fd, `${keyText(key)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

/** A rotation is complete: the new key becomes the key. */
export function promoteNextKey(home: string): void {
  renameSync(nextKeyFile(home), keyFile(home));
}

export function dropNextKey(home: string): void {
  rmSync(nextKeyFile(home), { force: true });
}
