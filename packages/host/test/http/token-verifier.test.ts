import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DEFAULT_OWNER, digest, TokenVerifier } from '../../src/http/auth';
import { migrate, type OpenedSqlite, openDatabase } from '../../src/storage/database';

/** The token check: the primary token and owners' tokens by their SHA-256 digest, nothing else. */

let home: string;
let opened: OpenedSqlite;

beforeEach(async () => {
  home = mkdtempSync(join(tmpdir(), 'fengyu-token-'));
  opened = openDatabase(home);
  await migrate(opened.db);
});

afterEach(async () => {
  await opened.close();
  rmSync(home, { recursive: true, force: true });
});

describe('TokenVerifier.ownerOf', () => {
  it('maps the primary token to the default owner and an owner token to its owner', async () => {
    const v = new TokenVerifier(opened.db, 'primary-token-of-enough-length');
    expect(await v.ownerOf('primary-token-of-enough-length')).toBe(DEFAULT_OWNER);
    const { token } = await v.createOwner('bob', '2026-01-01T00:00:00.000Z');
    expect(await v.ownerOf(token)).toBe('bob');
    // the stored digest is the hex SHA-256 of the token (what other processes write)
    const row = opened.raw?.prepare('select token_sha256 from owners where id = ?').get('bob') as { token_sha256: string };
    expect(row.token_sha256).toBe(digest(token));
  });

  it('refuses a wrong token, one differing in its last character, an empty one and an oversized one', async () => {
    const v = new TokenVerifier(opened.db, 'primary-token-of-enough-length');
    expect(await v.ownerOf('primary-token-of-enough-lengtH')).toBeUndefined();
    expect(await v.ownerOf('primary-token-of-enough-length ')).toBeUndefined();
    expect(await v.ownerOf('primary-token-of-enough-lengt')).toBeUndefined();
    expect(await v.ownerOf('primary-token-of-enough-lengħ')).toBeUndefined();
    expect(await v.ownerOf('')).toBeUndefined();
    expect(await v.ownerOf(undefined)).toBeUndefined();
    expect(await v.ownerOf('x'.repeat(513))).toBeUndefined();
  });

  it('digests non-ASCII tokens as UTF-8, like the stored digests', async () => {
    const v = new TokenVerifier(opened.db, 'jetons-privés-令牌-of-enough-length');
    expect(await v.ownerOf('jetons-privés-令牌-of-enough-length')).toBe(DEFAULT_OWNER);
    expect(await v.ownerOf('jetons-prives-令牌-of-enough-length')).toBeUndefined();
  });

  it('an owner added by another process (a row written directly) is accepted at once, with no restart', async () => {
    const v = new TokenVerifier(opened.db, 'primary-token-of-enough-length');
    expect(await v.ownerOf('carols-token-of-enough-length')).toBeUndefined();
    opened.raw?.prepare('insert into owners (id, name, token_sha256, created_at) values (?, ?, ?, ?)').run('carol', 'carol', digest('carols-token-of-enough-length'), '2026-01-01T00:00:00.000Z');
    expect(await v.ownerOf('carols-token-of-enough-length')).toBe('carol');
    opened.raw?.prepare('delete from owners where id = ?').run('carol');
    expect(await v.ownerOf('carols-token-of-enough-length')).toBeUndefined();
  });
});
