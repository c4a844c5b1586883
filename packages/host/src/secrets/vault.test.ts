import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, describe, expect, it } from 'vitest';
import { filesHolding } from '../../test/support/home-bytes';
import { systemClock } from '../clock';
import { migrate, openDatabase, type OpenedSqlite } from '../storage/database';
import { keyText, newKey, seal } from './cipher';
import { openVault } from './secrets.domain';
import { keyFile, nextKeyFile, writeKeyFile } from './secrets-key';

/** The vault's start: key file creation, a rotation cut short, and the move of clear copies. */

const homes: string[] = [];
const dbs: OpenedSqlite[] = [];
afterEach(async () => {
  for (const d of dbs.splice(0)) await d.close();
  for (const h of homes.splice(0)) rmSync(h, { recursive: true, force: true });
});

async function fresh(): Promise<{ home: string; db: OpenedSqlite }> {
  const home = mkdtempSync(join(tmpdir(), 'fengyu-vault-'));
  homes.push(home);
  const db = openDatabase(home);
  dbs.push(db);
  await migrate(db.db);
  return { home, db };
}

describe('the vault at start', () => {
  it('creates a 0600 key on a first start and opens its values after a restart', async () => {
    const { home, db } = await fresh();
    const vault = await openVault(db, { home }, systemClock);
    await vault.put('alice', 'TOKEN', 'alice-value-1');
    const again = await openVault(db, { home }, systemClock);
    expect(again.view('alice').value('TOKEN')).toBe('alice-value-1');
    expect(again.view('bob').names.size).toBe(0);
    expect(readFileSync(keyFile(home), 'utf8').trim()).toMatch(/^[0-9a-f]{64}$/);
  });

  it('finishes a rotation that committed before its key file was renamed; drops one that never committed', async () => {
    const { home, db } = await fresh();
    const vault = await openVault(db, { home }, systemClock);
    await vault.put('alice', 'TOKEN', 'rotated-value');
    // committed: every row sealed with the next key, the rename not yet done
    const next = newKey();
    writeKeyFile(nextKeyFile(home), next);
    await db.db.updateTable('secrets').set({ value: seal(next, 'alice', 'TOKEN', 'rotated-value'), key_id: next.id }).execute();
    const promoted = await openVault(db, { home }, systemClock);
    expect(promoted.view('alice').value('TOKEN')).toBe('rotated-value');
    expect(readFileSync(keyFile(home), 'utf8').trim()).toBe(keyText(next));
    // never committed: the next key is dropped, the key stays
    writeKeyFile(nextKeyFile(home), newKey());
    expect((await openVault(db, { home }, systemClock)).view('alice').value('TOKEN')).toBe('rotated-value');
    expect(() => readFileSync(nextKeyFile(home))).toThrow();
  });

  it('moves clear copies of earlier versions into the vault and leaves none on disk', async () => {
    const { home, db } = await fresh();
    mkdirSync(join(home, 'secrets'));
    writeFileSync(join(home, 'secrets', 'backend-keys.json'), JSON.stringify({ default: { local: 'sk-legacy-file-key' } }), { mode: 0o600 });
    writeFileSync(join(home, 'secrets', 'mcp-secrets.json'), JSON.stringify({ default: { 'gh/env/TOKEN': 'mcp-legacy-file' } }), { mode: 0o600 });
    const doc = { backends: [{ id: 'old', provider: 'openai', model: 'm', apiKey: 'sk-legacy-row-key' }], mcpServers: { fs: { command: 'x', args: [], env: { PASS: 'mcp-legacy-row' } } } };
    await db.db.insertInto('settings').values({ owner: 'default', doc: JSON.stringify(doc), updated_at: 'now' }).execute();
    db.raw.pragma('wal_checkpoint(truncate)');
    const vault = await openVault(db, { home }, systemClock);
    expect(vault.getInternal('default', 'backend:local')).toBe('sk-legacy-file-key');
    expect(vault.getInternal('default', 'backend:old')).toBe('sk-legacy-row-key');
    expect(vault.getInternal('default', 'mcp:gh/env/TOKEN')).toBe('mcp-legacy-file');
    expect(vault.getInternal('default', 'mcp:fs/env/PASS')).toBe('mcp-legacy-row');
    const row = await db.db.selectFrom('settings').select('doc').executeTakeFirstOrThrow();
    expect(JSON.parse(row.doc as string).backends[0].apiKey).toBe('[redacted]');
    for (const v of ['sk-legacy-file-key', 'sk-legacy-row-key', 'mcp-legacy-file', 'mcp-legacy-row']) expect(filesHolding(home, v), v).toEqual([]);
    // a second start finds nothing left to move and keeps every value
    expect((await openVault(db, { home }, systemClock)).getInternal('default', 'backend:old')).toBe('sk-legacy-row-key');
  });
});

describe('following another host on SQLite', () => {
  it('keeps no counter and reads nothing before a use: one host per file, memory is the truth', async () => {
    const { home, db } = await fresh();
    const vault = await openVault(db, { home }, systemClock);
    // without the counters' table at all, every write and check works: SQLite never touches it
    await sql`drop table secret_versions`.execute(db.db);
    await vault.replaceInternal('alice', 'backend:', { local: 'sk-sqlite-1' });
    await vault.mergeInternal('alice', { 'mcp:gh/env/TOKEN': 'mcp-sqlite-1' });
    await vault.removeInternal('alice', 'mcp:gh/env/TOKEN');
    expect(await vault.follow('alice')).toBe(false);
    expect(vault.stamp('alice', 'backend:')).toBe(0);
    expect(vault.getInternal('alice', 'backend:local')).toBe('sk-sqlite-1');
    expect(vault.getInternal('alice', 'mcp:gh/env/TOKEN')).toBeUndefined();
  });
});
