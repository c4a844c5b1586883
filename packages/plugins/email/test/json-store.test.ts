import { statSync } from 'node:fs';
import { mkdtemp, readFile, rename, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import * as H from '../src/handlers';
import { JsonFileCache, jsonFiles, writeJson } from '../src/json-store';
import * as S from '../src/schemas';
import { memorySecrets } from './memory-secrets';

let root: string;
let dir: string;
beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'fy-json-store-'));
});
afterAll(() => rm(root, { recursive: true, force: true }));
beforeEach(async () => {
  dir = await mkdtemp(join(root, 'd-'));
});

/**
 * Waits until the file system's timestamps have moved past `file`'s change time, so an edit in
 * place cannot land in the same timestamp tick (the case the settling rule exists for, which
 * these tests switch off on purpose).
 */
async function nextTick(file: string): Promise<void> {
  const seen = statSync(file, { bigint: true }).ctimeNs;
  const probe = join(dir, '.probe');
  for (;;) {
    await writeFile(probe, 'x');
    if (statSync(probe, { bigint: true }).ctimeNs > seen) return;
  }
}

/** A cache whose clock is an hour ahead: every file on disk counts as settled. */
const settledCache = () => new JsonFileCache(() => Date.now() + 3_600_000);

describe('JsonFileCache', () => {
  it('answers an unchanged file from memory, with a fresh value each time', async () => {
    const file = join(dir, 'a.json');
    await writeFile(file, '{"n":[1,2]}');
    const cache = settledCache();
    const first = cache.read<{ n: number[] }>(file, { n: [] });
    first.n.push(3);
    const second = cache.read<{ n: number[] }>(file, { n: [] });
    expect(second).toEqual({ n: [1, 2] });
    expect(cache.hits).toBe(1);
  });

  it('sees a file edited in place with the same size, replaced by rename, or deleted', async () => {
    const file = join(dir, 'a.json');
    await writeFile(file, '{"v":"aaaa"}');
    const cache = settledCache();
    expect(cache.read(file, {})).toEqual({ v: 'aaaa' });
    // same size, modification time put back: the change time still moves
    const before = new Date(Date.now() - 60_000);
    await nextTick(file);
    await utimes(file, before, before);
    expect(cache.read(file, {})).toEqual({ v: 'aaaa' });
    await nextTick(file);
    await writeFile(file, '{"v":"bbbb"}');
    await utimes(file, before, before);
    expect(cache.read(file, {})).toEqual({ v: 'bbbb' });
    await writeFile(join(dir, 'new.json'), '{"v":"cccc"}');
    await rename(join(dir, 'new.json'), file);
    expect(cache.read(file, {})).toEqual({ v: 'cccc' });
    await rm(file);
    expect(cache.read(file, { gone: true })).toEqual({ gone: true });
    await writeFile(file, '{"v":"dddd"}');
    expect(cache.read(file, {})).toEqual({ v: 'dddd' });
  });

  it('does not keep a file changed just before it was read', async () => {
    const file = join(dir, 'a.json');
    await writeFile(file, '[1]');
    const cache = new JsonFileCache(() => Date.now(), 60_000);
    expect(cache.read(file, [])).toEqual([1]);
    expect(cache.read(file, [])).toEqual([1]);
    expect(cache.hits).toBe(0);
  });

  it('still fails on a file that is not JSON', async () => {
    const file = join(dir, 'a.json');
    await writeFile(file, '{broken');
    expect(() => settledCache().read(file, {})).toThrow();
  });
});

describe('the e-mail stores read through the cache', () => {
  let ctx: { signal: AbortSignal; dataDir: string; secrets: ReturnType<typeof memorySecrets> };
  beforeEach(() => {
    ctx = { signal: new AbortController().signal, dataDir: dir, secrets: memorySecrets() };
    // every file counts as settled, so the stat check (not the settling rule) is what notices changes
    const real = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => real() + 3_600_000);
  });
  afterEach(() => vi.restoreAllMocks());

  const ids = async () => (await H.accountsList({}, ctx)).accounts.map((a) => a.id);
  const account = (id: string) => ({ id, name: id, from: `${id}@example.com`, host: '127.0.0.1', port: 25, tls: 'none' as const });

  it('an account saved or deleted through the plugin is seen on the next call', async () => {
    expect(await ids()).toEqual(['local-outbox']);
    await H.accountSave(S.AccountSaveInput.parse(account('office')), ctx);
    const hits = jsonFiles.hits;
    expect(await ids()).toEqual(['local-outbox', 'office']);
    expect(await ids()).toEqual(['local-outbox', 'office']);
    expect(jsonFiles.hits).toBeGreaterThan(hits); // the second list came from memory
    await H.accountSave(S.AccountSaveInput.parse(account('home')), ctx);
    expect(await ids()).toEqual(['local-outbox', 'home', 'office']);
    await H.accountDelete({ id: 'office' }, ctx);
    expect(await ids()).toEqual(['local-outbox', 'home']);
  });

  it('each data dir answers its own accounts (the stores made once per dir hold no data)', async () => {
    const other = { signal: ctx.signal, dataDir: await mkdtemp(join(root, 'other-')), secrets: memorySecrets() };
    await H.accountSave(S.AccountSaveInput.parse(account('office')), ctx);
    await H.accountSave(S.AccountSaveInput.parse(account('home')), other);
    expect(await ids()).toEqual(['local-outbox', 'office']);
    expect((await H.accountsList({}, other)).accounts.map((a) => a.id)).toEqual(['local-outbox', 'home']);
    await H.accountDelete({ id: 'office' }, ctx);
    expect(await ids()).toEqual(['local-outbox']);
    expect((await H.accountsList({}, other)).accounts.map((a) => a.id)).toEqual(['local-outbox', 'home']);
  });

  it('an accounts file changed outside the plugin is seen on the next call', async () => {
    await H.accountSave(S.AccountSaveInput.parse(account('office')), ctx);
    expect(await ids()).toEqual(['local-outbox', 'office']);
    expect(await ids()).toEqual(['local-outbox', 'office']);
    const file = join(dir, 'accounts.json');
    const edited = JSON.parse(await readFile(file, 'utf8')) as Array<Record<string, unknown>>;
    edited[0] = { ...edited[0], id: 'offic2' }; // same size
    await nextTick(file);
    await writeFile(file, JSON.stringify(edited, null, 2).concat('\n'));
    expect(await ids()).toEqual(['local-outbox', 'offic2']);
    // a secret added by another writer (e.g. another worker of this plugin) shows as hasSecret
    await writeJson(join(dir, 'secrets.json'), { offic2: 'pw' }, 0o600);
    expect((await H.accountsList({}, ctx)).accounts[1]?.hasSecret).toBe(true);
    await nextTick(join(dir, 'secrets.json'));
    await writeFile(join(dir, 'secrets.json'), '{}');
    expect((await H.accountsList({}, ctx)).accounts[1]?.hasSecret).toBe(false);
  });

  it('a recipient group saved through the plugin or edited on disk is seen on the next call', async () => {
    const names = async () => (await H.tagsList({}, ctx)).tags.map((t) => `${t.name}:${t.count}`);
    expect(await names()).toEqual([]);
    await H.tagSave(S.TagSaveInput.parse({ name: 'team', recipients: ['a@example.com'] }), ctx);
    expect(await names()).toEqual(['team:1']);
    await H.tagSave(S.TagSaveInput.parse({ name: 'team', recipients: ['a@example.com', 'b@example.com'] }), ctx);
    expect(await names()).toEqual(['team:2']);
    await nextTick(join(dir, 'tags.json'));
    await writeFile(join(dir, 'tags.json'), JSON.stringify([{ name: 'crew', recipients: ['c@example.com'] }]));
    expect(await names()).toEqual(['crew:1']);
  });
});
