import { execFileSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import type { SandboxPosture } from '../context';
import type { FileGrant } from '../tools/tool';

/**
 * Plugin isolation. On Linux with bubblewrap, every worker runs in a fresh mount namespace built
 * from nothing: system directories read-only, node's own directory read-only, the plugin's
 * install dir read-only, its data dir writable, each granted path bound at the SAME path
 * (read-only or read-write per grant), a private tmpfs /tmp, no network and no other
 * namespaces (`--unshare-all`), killed with the host (`--die-with-parent`). Same-path binds
 * mean a path one plugin returns (e.g. a file written into a shared directory) is valid for
 * the host and for the next plugin without translation.
 */

export type SandboxSetting = 'auto' | 'off' | 'bwrap';

export interface SandboxBackend {
  posture: SandboxPosture;
  /** Set when the setting demands a sandbox that cannot run here: plugin calls fail. */
  unavailable?: string;
  bwrapPath?: string;
}

export interface SpawnSpec {
  command: string;
  args: string[];
}

export interface WorkerLaunch {
  nodePath: string;
  worker: string;
  root: string;
  dataDir: string;
  grants: readonly FileGrant[];
  /** The manifest's `sandbox.network`: keep the host's network namespace. */
  network?: boolean;
}

const SYSTEM_DIRS = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];
const SYSTEM_FILES = ['/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/localtime', '/etc/ssl', '/etc/ca-certificates', '/etc/alternatives', '/etc/nsswitch.conf', '/etc/passwd', '/etc/group'];

const NETWORK_FILES = ['/etc/resolv.conf', '/etc/hosts', '/etc/gai.conf', '/etc/host.conf'];

function findOnPath(name: string, env: Readonly<Record<string, string | undefined>>): string | undefined {
  for (const dir of (env.PATH ?? '/usr/bin:/bin').split(delimiter)) {
    const candidate = join(dir, name);
    if (dir && existsSync(candidate)) return candidate;
  }
  return undefined;
}

/** Probes the platform once at start: which backend runs workers. */
export function detectSandbox(setting: SandboxSetting, env: Readonly<Record<string, string | undefined>>, platform = process.platform): SandboxBackend {
  const none: SandboxBackend = { posture: { mode: 'unsandboxed', backend: 'none' } };
  if (setting === 'off') return none;
  const bwrap = platform === 'linux' ? findOnPath('bwrap', env) : undefined;
  let reason = platform === 'linux' ? 'bwrap was not found on PATH (apt package bubblewrap)' : `bubblewrap needs Linux, this is ${platform}`;
  if (bwrap) {
    try {
      execFileSync(bwrap, ['--unshare-all', '--die-with-parent', '--ro-bind', '/usr', '/usr', ...SYSTEM_DIRS.slice(1).flatMap((d) => ['--ro-bind-try', d, d]), 'true'], { timeout: 10_000, stdio: 'ignore' });
      return { posture: { mode: 'sandboxed', backend: 'bwrap' }, bwrapPath: bwrap };
    } catch (e) {
      reason = `bwrap cannot create namespaces here: ${(e as Error).message}`;
    }
  }
  if (setting === 'bwrap') return { ...none, unavailable: reason };
  return none;
}

/** The argv that starts a worker: plain `node worker`, or node inside bubblewrap. */
export function workerCommand(backend: SandboxBackend, launch: WorkerLaunch): SpawnSpec {
  const workerPath = join(launch.root, launch.worker);
  if (!backend.bwrapPath) return { command: launch.nodePath, args: [workerPath] };
  return { command: backend.bwrapPath, args: [...bwrapArgs(launch), '--', launch.nodePath, workerPath] };
}

/** Pure: the bubblewrap arguments for one worker launch. */
export function bwrapArgs(launch: WorkerLaunch): string[] {
  const args = ['--unshare-all', ...(launch.network ? ['--share-net'] : []), '--die-with-parent', '--new-session', '--clearenv'];
  for (const d of SYSTEM_DIRS) args.push('--ro-bind-try', d, d);
  for (const f of [...SYSTEM_FILES, ...(launch.network ? NETWORK_FILES : [])]) args.push('--ro-bind-try', f, f);
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  const nodeReal = safeRealpath(launch.nodePath);
  const nodeDir = dirname(nodeReal);
  if (!SYSTEM_DIRS.some((d) => nodeDir === d || nodeDir.startsWith(`${d}/`))) args.push('--ro-bind', nodeDir, nodeDir);
  if (nodeReal !== launch.nodePath) args.push('--ro-bind', launch.nodePath, launch.nodePath);
  // Parents before children, so a nested bind is not hidden by its parent's.
  const binds: Array<{ path: string; writable: boolean }> = [
    { path: launch.root, writable: false },
    { path: launch.dataDir, writable: true },
    ...launch.grants.map((g) => ({ path: g.path, writable: g.access !== 'read' })),
  ].sort((a, b) => a.path.length - b.path.length);
  for (const b of binds) args.push(b.writable ? '--bind' : '--ro-bind', b.path, b.path);
  args.push('--chdir', launch.root);
  const env: Record<string, string> = {
    PATH: '/usr/local/bin:/usr/bin:/bin',
    HOME: launch.dataDir,
    TMPDIR: '/tmp',
    LANG: 'C.UTF-8',
    FENGYU_PLUGIN_ROOT: launch.root,
    FENGYU_PLUGIN_DATA: launch.dataDir,
  };
  for (const [k, v] of Object.entries(env)) args.push('--setenv', k, v);
  return args;
}

/** A stable key of the grants a sandboxed worker was started with (one warm worker per key). */
export function grantKey(backend: SandboxBackend, grants: readonly FileGrant[]): string {
  if (!backend.bwrapPath) return '';
  return grants
    .map((g) => `${g.access}:${g.path}`)
    .sort()
    .join('\n');
}

function safeRealpath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}
