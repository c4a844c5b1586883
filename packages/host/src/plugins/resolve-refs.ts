import { FengYuError, fileInputOf, type JsonSchema } from '@fengyu/protocol';
import { isAbsolute } from 'node:path';
import { fileResolver } from '../files/run-files';
import { isHostPathLike, requireGranted } from '../files/grant-paths';
import type { FileGrant } from '../tools/tool';
import './plugin-errors';

/**
 * `resolveRefs`: the last step before a plugin call is dispatched. Rewrites `@file:<name>`
 * strings and FileRef objects (`{fileRef: {id…} | "id"}`, or a bare `{id, name, size, sha256}`)
 * to the granted host path — which is also the path inside the sandbox, since grants are bound
 * at the same path — and refuses any path outside the run's grants: absolute paths that could
 * name something on this host, and relative or ungranted values of declared file parameters
 * (`format: fengyu-file | fengyu-directory`, `x-fengyu-auto: shared-directory`). A directory
 * parameter needs a write or read-write grant. The worker never sees an unresolved FileRef.
 */

type FileParamKind = 'file' | 'directory';

/** Per input schema (a tool's schema object is fixed for the tool's life): its declared file parameters. */
const fileParamsBySchema = new WeakMap<JsonSchema, Map<string, FileParamKind>>();

function declaredFileParams(schema: JsonSchema): Map<string, FileParamKind> {
  let params = fileParamsBySchema.get(schema);
  if (!params) {
    params = fileParamsOf(schema);
    fileParamsBySchema.set(schema, params);
  }
  return params;
}

function fileParamsOf(schema: JsonSchema): Map<string, FileParamKind> {
  const out = new Map<string, FileParamKind>();
  const props = schema.properties;
  if (!props || typeof props !== 'object') return out;
  for (const [name, raw] of Object.entries(props as Record<string, Record<string, unknown>>)) {
    if (!raw || typeof raw !== 'object') continue;
    if (raw.format === 'fengyu-directory' || raw['x-fengyu-auto'] === 'shared-directory') out.set(name, 'directory');
    else if (raw.format === 'fengyu-file') out.set(name, 'file');
  }
  return out;
}

const SHA256 = /^[0-9a-f]{64}$/i;

/** The FileRef id of a value shaped like a FileRef, or undefined. */
export function fileRefIdOf(value: unknown): string | undefined {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const v = value as Record<string, unknown>;
  if ('fileRef' in v && Object.keys(v).length === 1) {
    if (typeof v.fileRef === 'string') return v.fileRef;
    if (v.fileRef && typeof v.fileRef === 'object' && typeof (v.fileRef as { id?: unknown }).id === 'string') return (v.fileRef as { id: string }).id;
    return '';
  }
  const keys = Object.keys(v).sort().join(',');
  if (keys === 'id,name,sha256,size' && typeof v.id === 'string' && typeof v.sha256 === 'string' && SHA256.test(v.sha256)) return v.id;
  return undefined;
}

function byFileId(id: string, grants: readonly FileGrant[]): string {
  const grant = grants.find((g) => g.fileId === id && id !== '');
  if (!grant) throw new FengYuError('unresolved_file_ref', { name: id || '(empty fileRef)' });
  return grant.path;
}

function checkPathValue(value: string, grants: readonly FileGrant[], declared: FileParamKind | undefined): string {
  if (declared) {
    if (!isAbsolute(value)) throw new FengYuError('path_not_granted', { path: value });
    requireGranted(value, grants, declared === 'directory');
  } else if (isHostPathLike(value)) requireGranted(value, grants);
  return value;
}

function walk(value: unknown, grants: readonly FileGrant[], declared: FileParamKind | undefined, resolveFile: (n: string) => string | string[]): unknown {
  if (typeof value === 'string') {
    const input = fileInputOf(value);
    if (input !== undefined) {
      const resolved = resolveFile(input);
      for (const p of Array.isArray(resolved) ? resolved : [resolved]) checkPathValue(p, grants, declared);
      return resolved;
    }
    return checkPathValue(value, grants, declared);
  }
  const refId = fileRefIdOf(value);
  if (refId !== undefined) return checkPathValue(byFileId(refId, grants), grants, declared);
  if (Array.isArray(value)) return value.map((v) => walk(v, grants, declared, resolveFile));
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) out[k] = walk(v, grants, undefined, resolveFile);
    return out;
  }
  return value;
}

/** Resolves and checks a plugin call's arguments against the run's grants (a new object). */
export function resolveRefs(args: Record<string, unknown>, grants: readonly FileGrant[], inputSchema: JsonSchema): Record<string, unknown> {
  const params = declaredFileParams(inputSchema);
  let resolver: ((name: string) => string | string[]) | undefined;
  const resolveFile = (name: string) => (resolver ??= fileResolver(grants))(name);
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(args)) out[k] = walk(v, grants, params.get(k), resolveFile);
  return out;
}
