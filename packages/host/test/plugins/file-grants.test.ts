import { existsSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { isFengYuError } from '@fengyu/protocol';
import { beforeAll, describe, expect, it } from 'vitest';
import { FileService, safeFileName } from '../../src/files/file.service';
import { fileResolver, resolveRunFiles } from '../../src/files/run-files';
import { fileRefIdOf, resolveRefs } from '../../src/plugins/resolve-refs';
import { migrate, openDatabase } from '../../src/storage/database';
import type { FileGrant } from '../../src/tools/tool';
import { tempDir } from './helpers';

function codeOf(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    return isFengYuError(e) ? e.code : String(e);
  }
  return 'ok';
}

describe('resolveRefs', () => {
  const base = tempDir();
  const granted = join(base, 'granted');
  const shared = join(base, 'shared');
  const outside = join(base, 'outside');
  const grants: FileGrant[] = [
    { name: 'doc', path: join(granted, 'doc.txt'), kind: 'file', access: 'read', fileId: 'f1' },
    { name: 'dir', path: granted, kind: 'directory', access: 'read' },
    { name: 'out', path: shared, kind: 'directory', access: 'read-write' },
  ];
  const schema = {
    type: 'object',
    properties: { file: { type: 'string', format: 'fengyu-file' }, folder: { type: 'string', format: 'fengyu-directory' }, text: { type: 'string' } },
  };
  beforeAll(() => {
    for (const d of [granted, shared, outside]) mkdirSync(d, { recursive: true });
    writeFileSync(join(granted, 'doc.txt'), 'x');
    writeFileSync(join(outside, 'secret.txt'), 's');
    symlinkSync(outside, join(granted, 'escape'));
  });

  it('rewrites @file: placeholders and FileRef objects to granted paths', () => {
    const out = resolveRefs(
      { file: '@file:doc', folder: '@file:out', nested: { ref: { fileRef: { id: 'f1', name: 'doc.txt' } }, bare: { id: 'f1', name: 'doc.txt', size: 1, sha256: 'a'.repeat(64) }, byId: { fileRef: 'f1' } } },
      grants,
      schema,
    );
    expect(out).toEqual({ file: join(granted, 'doc.txt'), folder: shared, nested: { ref: join(granted, 'doc.txt'), bare: join(granted, 'doc.txt'), byId: join(granted, 'doc.txt') } });
  });

  it.each([
    ['an unknown @file: name', { text: '@file:nope' }, 'unresolved_file_ref'],
    ['an unknown FileRef id', { x: { fileRef: 'zzz' } }, 'unresolved_file_ref'],
    ['an absolute path outside every grant', { text: join(outside, 'secret.txt') }, 'path_not_granted'],
    ['/etc/passwd', { text: '/etc/passwd' }, 'path_not_granted'],
    ['a .. escape from a granted dir', { text: `${granted}/../outside/secret.txt` }, 'path_not_granted'],
    ['a symlink inside a granted dir pointing outside', { text: join(granted, 'escape', 'secret.txt') }, 'path_not_granted'],
    ['a relative path in a file parameter', { file: '../outside/secret.txt' }, 'path_not_granted'],
    ['a read-only grant for a directory parameter', { folder: granted }, 'path_not_granted'],
    ['a nested absolute path in an array', { list: ['ok', join(outside, 'secret.txt')] }, 'path_not_granted'],
  ])('refuses %s', (_name, args, code) => {
    expect(codeOf(() => resolveRefs(args, grants, schema))).toBe(code);
  });

  it('passes ordinary text, paths inside grants, and slash strings that name nothing on this host', () => {
    const args = { text: 'see /api/v1/thing', other: '/definitely/not/here/x', file: join(granted, 'doc.txt'), folder: join(shared, 'sub') };
    expect(resolveRefs(args, grants, schema)).toEqual(args);
  });

  it('recognizes FileRef shapes strictly', () => {
    expect(fileRefIdOf({ id: 'x', name: 'n', size: 1, sha256: 'b'.repeat(64) })).toBe('x');
    expect(fileRefIdOf({ id: 'x', name: 'n' })).toBeUndefined();
    expect(fileRefIdOf({ fileRef: 5 })).toBe('');
  });

  it('fileResolver returns one path, or all paths of a multi-ref entry', () => {
    const many: FileGrant[] = [...grants, { name: 'doc', path: '/tmp/other', kind: 'file', access: 'read' }];
    expect(fileResolver(grants)('out')).toBe(shared);
    expect(fileResolver(many)('doc')).toEqual([join(granted, 'doc.txt'), '/tmp/other']);
    expect(codeOf(() => fileResolver(grants)('missing'))).toBe('unresolved_file_ref');
  });
});

describe('resolveRunFiles and uploads', () => {
  const home = tempDir();
  const opened = openDatabase(home, 'memory');
  const ctx = { db: opened.db, config: { home } } as Parameters<typeof resolveRunFiles>[0];
  const files = new FileService(opened.db, home, { now: () => 0 }, 64);
  beforeAll(async () => {
    await migrate(opened.db);
  });

  it('stores uploads with size and sha256, refusing oversized ones', async () => {
    const ref = await files.store('me', '../../evil name.txt', Readable.from([Buffer.from('hello')]));
    expect(ref).toMatchObject({ name: 'evil name.txt', size: 5, sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824' });
    await expect(files.store('me', 'big', Readable.from([Buffer.alloc(65)]))).rejects.toMatchObject({ code: 'file_too_large' });
    expect(safeFileName('..')).toBe('upload');
  });

  it('turns refs, native paths and shared directories into grants', async () => {
    const ref = await files.store('default', 'a.txt', Readable.from([Buffer.from('a')]));
    const grants = await resolveRunFiles(ctx, 'default', 'run1', [
      { name: 'upload', refs: [ref.id] },
      { name: 'native', nativePath: home, access: 'read-write' },
      { name: 'share', createSharedDirectory: true },
    ]);
    expect(grants).toEqual([
      { name: 'upload', path: expect.stringContaining(`files/${ref.id}/a.txt`), kind: 'file', access: 'read', fileId: ref.id },
      { name: 'native', path: expect.any(String), kind: 'directory', access: 'read-write' },
      { name: 'share', path: expect.stringContaining('runs/run1/shared/share'), kind: 'directory', access: 'read-write' },
    ]);
  });

  it('reports every problem before creating anything', async () => {
    const other = await files.store('someone-else', 'b.txt', Readable.from([Buffer.from('b')]));
    await expect(resolveRunFiles(ctx, 'someone-else', 'run3', [{ name: 'n', nativePath: '/tmp' }])).rejects.toMatchObject({ details: [{ code: 'files_native_forbidden' }] });
    try {
      await resolveRunFiles(ctx, 'default', 'run2', [
        { name: 'bad name!', createSharedDirectory: true },
        { name: 'dup', createSharedDirectory: true },
        { name: 'dup', createSharedDirectory: true },
        { name: 'both', refs: [], nativePath: '/tmp' },
        { name: 'foreign', refs: [other.id] },
        { name: 'rel', nativePath: 'relative/path' },
        { name: 'gone', nativePath: '/definitely/not/here' },
      ]);
      throw new Error('expected invalid_files');
    } catch (e) {
      expect(isFengYuError(e) && e.code).toBe('invalid_files');
      const codes = ((e as { details: Array<{ code: string }> }).details ?? []).map((p) => p.code);
      expect(codes).toEqual(['files_bad_name', 'files_duplicate_name', 'files_bad_entry', 'files_unknown_ref', 'files_native_relative', 'files_native_missing']);
    }
    expect(existsSync(join(home, 'runs', 'run2'))).toBe(false);
  });
});
