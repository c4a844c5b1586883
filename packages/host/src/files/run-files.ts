import { existsSync, realpathSync, statSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { isAbsolute, join } from 'node:path';
import { FengYuError, type Problem } from '@fengyu/protocol';
import type { CoreServices } from '../services';
import type { FileGrant } from '../tools/tool';
import { FileRepository, type FileRow } from './file.repository';
import '../plugins/plugin-errors';

/**
 * A run's `files` array → grants: `refs` (uploaded FileRefs, read-only),
 * `nativePath` (a host path, read-only unless `access` says otherwise) or
 * `createSharedDirectory` (a fresh `$FENGYU_HOME/runs/<runId>/shared/<name>`, read-write for
 * every plugin — the cross-plugin hand-off). Everything is validated before any directory is
 * created; problems are reported together (`invalid_files`).
 */

export interface RunFileEntry {
  name: string;
  /** FileRef ids, or FileRef objects `{id, …}`. */
  refs?: Array<string | { id: string }>;
  nativePath?: string;
  createSharedDirectory?: boolean;
  /** For `nativePath` only: default `read`. */
  access?: FileGrant['access'];
}

export const FILE_ENTRY_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;

type Planned =
  | { name: string; kind: 'refs'; rows: FileRow[] }
  | { name: string; kind: 'native'; path: string; directory: boolean; access: FileGrant['access'] }
  | { name: string; kind: 'shared' };

/** Owners other than the host's default one may grant only their own uploads and shared dirs. */
const NATIVE_PATH_OWNER = 'default';

async function plan(repo: FileRepository, owner: string, files: readonly RunFileEntry[]): Promise<{ planned: Planned[]; problems: Problem[] }> {
  const problems: Problem[] = [];
  const planned: Planned[] = [];
  const names = new Set<string>();
  for (const [i, entry] of files.entries()) {
    const name = typeof entry?.name === 'string' ? entry.name : `#${i}`;
    const field = `files[${i}]`;
    if (!FILE_ENTRY_NAME.test(name)) problems.push({ code: 'files_bad_name', field, params: { name } });
    if (names.has(name)) problems.push({ code: 'files_duplicate_name', field, params: { name } });
    names.add(name);
    const kinds = [entry.refs !== undefined, entry.nativePath !== undefined, entry.createSharedDirectory === true].filter(Boolean).length;
    if (kinds !== 1) {
      problems.push({ code: 'files_bad_entry', field, params: { name } });
      continue;
    }
    if (entry.refs !== undefined) {
      const rows: FileRow[] = [];
      for (const ref of Array.isArray(entry.refs) ? entry.refs : []) {
        const id = typeof ref === 'string' ? ref : typeof ref?.id === 'string' ? ref.id : '';
        const row = id ? await repo.get(owner, id) : undefined;
        if (!row || !existsSync(row.path)) problems.push({ code: 'files_unknown_ref', field: `${field}.refs`, params: { name, fileId: id } });
        else rows.push(row);
      }
      if (!Array.isArray(entry.refs) || entry.refs.length === 0) problems.push({ code: 'files_bad_entry', field, params: { name } });
      planned.push({ name, kind: 'refs', rows });
    } else if (entry.nativePath !== undefined) {
      const path = String(entry.nativePath);
      if (owner !== NATIVE_PATH_OWNER) problems.push({ code: 'files_native_forbidden', field, params: { name } });
      else if (!isAbsolute(path)) problems.push({ code: 'files_native_relative', field, params: { name, path } });
      else if (!existsSync(path)) problems.push({ code: 'files_native_missing', field, params: { name, path } });
      else {
        const real = realpathSync(path);
        planned.push({ name, kind: 'native', path: real, directory: statSync(real).isDirectory(), access: entry.access ?? 'read' });
      }
    } else planned.push({ name, kind: 'shared' });
  }
  return { planned, problems };
}

/** Validates `files`, creates shared directories, and returns the run's grants. */
export async function resolveRunFiles(ctx: Pick<CoreServices, 'db' | 'config'>, owner: string, runId: string, files: readonly RunFileEntry[] | undefined): Promise<FileGrant[]> {
  if (!files || files.length === 0) return [];
  if (!Array.isArray(files)) throw new FengYuError('invalid_files', { count: 1 }, [{ code: 'files_bad_entry', params: { name: '(files)' } }]);
  const { planned, problems } = await plan(new FileRepository(ctx.db), owner, files);
  if (problems.length > 0) throw new FengYuError('invalid_files', { count: problems.length }, problems);
  const grants: FileGrant[] = [];
  for (const p of planned) {
    if (p.kind === 'refs') {
      for (const row of p.rows) grants.push({ name: p.name, path: realpathSync(row.path), kind: 'file', access: 'read', fileId: row.id });
    } else if (p.kind === 'native') {
      grants.push({ name: p.name, path: p.path, kind: p.directory ? 'directory' : 'file', access: p.access });
    } else {
      const dir = join(ctx.config.home, 'runs', runId, 'shared', p.name);
      await mkdir(dir, { recursive: true });
      grants.push({ name: p.name, path: realpathSync(dir), kind: 'directory', access: 'read-write' });
    }
  }
  return grants;
}

/**
 * The `scope.file(name)` of the reference resolver: `@file:<name>` → the granted host path
 * (a list of paths when the entry has several refs). Unknown names → `unresolved_file_ref`.
 */
export function fileResolver(grants: readonly FileGrant[]): (name: string) => string | string[] {
  return (name) => {
    const matching = grants.filter((g) => g.name === name);
    if (matching.length === 0) throw new FengYuError('unresolved_file_ref', { name });
    return matching.length === 1 ? (matching[0] as FileGrant).path : matching.map((g) => g.path);
  };
}
