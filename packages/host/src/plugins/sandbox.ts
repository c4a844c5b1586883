import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { isInside, realPathOf } from '../files/grant-paths';
import type { SandboxPosture } from './posture';
import type { FileGrant } from '../tools/tool';

/**
 * Plugin isolation. On Linux with bubblewrap, every worker runs in a fresh mount namespace built
 * from nothing: system directories read-only, node's own directory read-only, the plugin's
 * install dir read-only, its data dir writable, each granted path bound at the SAME path
 * (read-only or read-write per grant), a private tmpfs /tmp, no network and no other
 * namespaces (`--unshare-all`), killed with the host (`--die-with-parent`). Same-path binds
 * mean a path one plugin returns (e.g. a file written into a shared directory) is valid for
 * the host and for the next plugin without translation.
 *
 * A read-only bind only holds while the process inside cannot remount it: bubblewrap started by
 * root keeps every capability (CAP_SYS_ADMIN included) unless told otherwise, so every launch
 * drops all capabilities (`--cap-drop ALL`), runs in a new user namespace (`--unshare-user`)
 * and forbids creating further ones (`--disable-userns`) where the kernel and bubblewrap allow
 * it. The probe at start finds the strongest of these that works here; capabilities are
 * dropped in every case.
 */

export type SandboxSetting = 'auto' | 'off' | 'bwrap';

export interface SandboxBackend {
  posture: SandboxPosture;
  /** Set when the setting demands a sandbox that cannot run here: plugin calls fail. */
  unavailable?: string;
  bwrapPath?: string;
  /** Hardening flags the probe found working (always `--cap-drop ALL`, user namespace where possible). */
  hardening?: readonly string[];
}

/** Strongest first: the probe keeps the first set bubblewrap accepts on this kernel. */
const HARDENING_CANDIDATES: readonly (readonly string[])[] = [
  ['--unshare-user', '--disable-userns', '--cap-drop', 'ALL'],
  ['--unshare-user', '--cap-drop', 'ALL'],
  ['--cap-drop', 'ALL'],
];
const BASE_HARDENING: readonly string[] = ['--cap-drop', 'ALL'];

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
    for (const hardening of HARDENING_CANDIDATES) {
      try {
        execFileSync(bwrap, ['--unshare-all', ...hardening, '--die-with-parent', '--ro-bind', '/usr', '/usr', ...SYSTEM_DIRS.slice(1).flatMap((d) => ['--ro-bind-try', d, d]), 'true'], { timeout: 10_000, stdio: 'ignore' });
        return { posture: { mode: 'sandboxed', backend: 'bwrap' }, bwrapPath: bwrap, hardening };
      } catch (e) {
        reason = `bwrap cannot create namespaces here: ${(e as Error).message}`;
      }
    }
  }
  if (setting === 'bwrap') return { ...none, unavailable: reason };
  return none;
}

/** The argv that starts a worker: plain `node worker`, or node inside bubblewrap. */
export function workerCommand(backend: SandboxBackend, launch: WorkerLaunch): SpawnSpec {
  const workerPath = join(launch.root, launch.worker);
  if (!backend.bwrapPath) return { command: launch.nodePath, args: [workerPath] };
  return { command: backend.bwrapPath, args: [...bwrapArgs(launch, backend.hardening), '--', launch.nodePath, workerPath] };
}

/** Pure: the bubblewrap arguments for one worker launch. */
export function bwrapArgs(launch: WorkerLaunch, hardening: readonly string[] = BASE_HARDENING): string[] {
  const args = ['--unshare-all', '--die-with-parent', ...withCapDrop(hardening), ...(launch.network ? ['--share-net'] : []), '--new-session', '--clearenv'];
  for (const d of SYSTEM_DIRS) args.push('--ro-bind-try', d, d);
  for (const f of [...SYSTEM_FILES, ...(launch.network ? NETWORK_FILES : [])]) args.push('--ro-bind-try', f, f);
  args.push('--proc', '/proc', '--dev', '/dev', '--tmpfs', '/tmp');
  const nodeReal = realPathOf(launch.nodePath);
  const nodeDir = dirname(nodeReal);
  if (!SYSTEM_DIRS.some((d) => isInside(d, nodeDir))) args.push('--ro-bind', nodeDir, nodeDir);
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

/** Capabilities are dropped whatever the caller passed. */
function withCapDrop(hardening: readonly string[]): string[] {
  const out = [...hardening];
  if (!out.includes('--cap-drop')) out.push(...BASE_HARDENING);
  return out;
}

export interface CommandSandbox {
  /** FENGYU_HOME: replaced by an empty directory (its token, database and secrets are not visible). */
  home: string;
  /** The host user's home directory: replaced by an empty directory as well. */
  userHome?: string;
  /** The command's scratch directory (bound writable; usually under FENGYU_HOME). */
  scratch: string;
  grants: readonly FileGrant[];
  cwd: string;
  /** Paths under /run to keep visible read-only (e.g. where /etc/resolv.conf points). */
  keep?: readonly string[];
}

/** Directories under /run that the system's name resolution needs (where /etc/resolv.conf points). */
export function resolverPaths(): string[] {
  const real = realPathOf('/etc/resolv.conf');
  return real.startsWith('/run/') ? [dirname(real)] : [];
}

/**
 * Pure: bubblewrap arguments for a command of an owner other than the primary one. The whole
 * file system is visible read-only, except FENGYU_HOME and the host user's home directory,
 * which are empty; the scratch directory and writable grants are writable, read grants
 * read-only; private /tmp, /proc (own PID namespace: other processes, their environment and
 * command lines are not visible) and /run; network shared; killed with the host.
 */
export function commandBwrapArgs(box: CommandSandbox, hardening: readonly string[] = BASE_HARDENING): string[] {
  const args = ['--unshare-all', '--share-net', '--die-with-parent', ...withCapDrop(hardening), '--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp', '--tmpfs', '/run'];
  for (const f of box.keep ?? []) args.push('--ro-bind-try', f, f);
  // One list ordered by path length, parents first; on a tie the bind goes first, so a grant of
  // a hidden directory itself (or of an ancestor) never uncovers it. Inside FENGYU_HOME only
  // uploaded files and run directories may be bound back.
  const hidden = [box.home, ...(box.userHome && box.userHome !== '/' ? [box.userHome] : [])];
  const underHome = (p: string) => isInside(box.home, p);
  const mayBind = (p: string) => !underHome(p) || isInside(join(box.home, 'files'), p) || isInside(join(box.home, 'runs'), p);
  const ops: Array<{ path: string; op: '--tmpfs' | '--bind' | '--ro-bind'; rank: number }> = [
    ...hidden.map((path) => ({ path, op: '--tmpfs' as const, rank: 1 })),
    { path: box.scratch, op: '--bind' as const, rank: 0 },
    ...box.grants.filter((g) => mayBind(g.path)).map((g) => ({ path: g.path, op: g.access === 'read' ? ('--ro-bind' as const) : ('--bind' as const), rank: 0 })),
  ].sort((a, b) => a.path.length - b.path.length || a.rank - b.rank);
  for (const o of ops) args.push(o.op, o.path, ...(o.op === '--tmpfs' ? [] : [o.path]));
  args.push('--chdir', box.cwd);
  return args;
}

const detected = new WeakMap<object, SandboxBackend>();

/** The sandbox backend of one host, probed once (keyed by its configuration object). */
export function sandboxFor(config: { sandbox: SandboxSetting; env: Readonly<Record<string, string | undefined>> }): SandboxBackend {
  let backend = detected.get(config);
  if (!backend) {
    backend = detectSandbox(config.sandbox, config.env);
    detected.set(config, backend);
  }
  return backend;
}
