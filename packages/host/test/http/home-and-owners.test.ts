import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';

/** FENGYU_HOME is private to its owner, and creating an owner never rotates an existing token. */

const mode = (p: string) => statSync(p).mode & 0o777;

describe('FENGYU_HOME permissions', () => {
  it('a new home is 0700 with the database and token 0600', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'fengyu-home-'));
    const home = join(parent, 'fresh');
    const t = await startTestHost({ keepHome: home });
    try {
      await t.api('PATCH', '/api/settings', { locale: 'en' });
      expect(mode(home)).toBe(0o700);
      expect(mode(join(home, 'token'))).toBe(0o600);
      expect(mode(join(home, 'fengyu.db'))).toBe(0o600);
      for (const f of ['fengyu.db-wal', 'fengyu.db-shm']) if (existsSync(join(home, f))) expect(mode(join(home, f)), f).toBe(0o600);
    } finally {
      await t.close();
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it('an existing home left world-readable is tightened at start', async () => {
    const home = mkdtempSync(join(tmpdir(), 'fengyu-home-'));
    chmodSync(home, 0o755);
    mkdirSync(home, { recursive: true });
    writeFileSync(join(home, 'token'), 'an-existing-token-of-enough-length\n', { mode: 0o644 });
    chmodSync(join(home, 'token'), 0o644);
    writeFileSync(join(home, 'fengyu.db'), '', { mode: 0o644 });
    chmodSync(join(home, 'fengyu.db'), 0o644);
    const t = await startTestHost({ keepHome: home });
    try {
      expect(mode(home)).toBe(0o700);
      expect(mode(join(home, 'token'))).toBe(0o600);
      expect(mode(join(home, 'fengyu.db'))).toBe(0o600);
      expect(t.host.token).toBe('an-existing-token-of-enough-length');
    } finally {
      await t.close();
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('POST /api/owners', () => {
  let t: TestHost;
  beforeAll(async () => {
    t = await startTestHost();
  });
  afterAll(async () => t.close());

  it('creates an owner once; the same name again is a 409 and the first token keeps working', async () => {
    const first = await t.api('POST', '/api/owners', { name: 'alice' });
    expect(first.status).toBe(200);
    const again = await t.api('POST', '/api/owners', { name: 'alice' });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('owner_exists');
    expect(again.body.token).toBeUndefined();
    const zh = await t.api('POST', '/api/owners', { name: 'alice' }, { 'accept-language': 'zh-CN' });
    expect(zh.body.error.message).toContain('已存在');
    const stillWorks = await t.api('GET', '/api/settings', undefined, { 'x-fengyu-token': first.body.token });
    expect(stillWorks.status).toBe(200);
  });

  it('only the default owner creates owners', async () => {
    const bob = await t.api('POST', '/api/owners', { name: 'bob' });
    const res = await t.api('POST', '/api/owners', { name: 'carol' }, { 'x-fengyu-token': bob.body.token });
    expect(res.status).toBe(403);
  });
});
