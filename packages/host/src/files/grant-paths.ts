import { existsSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { FengYuError } from '@fengyu/protocol';
import type { FileGrant } from '../tools/tool';
import '../plugins/plugin-errors';

/**
 * Path containment, the one check used by file grants, command working directories, plugin
 * packages and the static web UI. Paths are normalized (`..` folded) and resolved through
 * symlinks (realpath of the deepest existing ancestor), so neither `..` nor a symlink inside a
 * directory can reach outside it.
 */

/** Lexical: `p` is `root` itself or below it (absolute paths, compared as given). */
export function isInside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (!isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${sep}`));
}

/**
 * The real path of `rel` (relative to `root`, or absolute) when, after `..` and every symlink are
 * resolved, it is still inside the real path of `root`; undefined when it escapes.
 */
export function resolveInside(root: string, rel: string): string | undefined {
  if (rel.includes('\0')) return undefined;
  const realRoot = realPathOf(root);
  const real = realPathOf(resolve(realRoot, rel));
  return isInside(realRoot, real) ? real : undefined;
}

/** The real path of `p`: realpath of its deepest existing ancestor, plus the rest. */
export function realPathOf(p: string): string {
  let head = resolve(p);
  const rest: string[] = [];
  for (;;) {
    try {
      return join(realpathSync(head), ...rest.reverse());
    } catch {
      const parent = dirname(head);
      if (parent === head) return resolve(p);
      rest.push(basename(head));
      head = parent;
    }
  }
}

export function grantCovers(grant: FileGrant, real: string, write: boolean): boolean {
  if (write && grant.access === 'read') return false;
  if (real === grant.path) return true;
  return grant.kind === 'directory' && isInside(grant.path, real);
}

/** The grant covering `path` (with write access when asked), or a `path_not_granted` error. */
export function requireGranted(path: string, grants: readonly FileGrant[], write = false): FileGrant {
  const real = realPathOf(path);
  const grant = grants.find((g) => grantCovers(g, real, write));
  if (!grant) throw new FengYuError('path_not_granted', { path });
  return grant;
}

/** True when an absolute path could name something on this host (it or its parent exists). */
export function isHostPathLike(value: string): boolean {
  if (!value.startsWith('/') || value.length > 4096 || value.includes('\n') || value.includes('\0')) return false;
  const p = resolve(value);
  return existsSync(p) || (dirname(p) !== p && existsSync(dirname(p)));
}
