import { join } from 'node:path';
import { errorSpecOf, FengYuError, registerErrors } from '@fengyu/protocol';
import { commandBwrapArgs, resolverPaths } from '../plugins/sandbox';
import type { FileGrant } from '../tools/tool';
import { allowListedEnv, withoutHostToken } from './env';
import type { SpawnSpec } from './spawn';

/**
 * Shell commands run on behalf of an owner (`execute_command`, the owner's own command hooks).
 *
 * The primary owner's commands run as the host user with the host's environment minus the host
 * token. Any other owner's commands run in bubblewrap, where FENGYU_HOME (token, database,
 * secrets) and the host user's home directory are empty, other processes are invisible, nothing
 * outside the scratch directory and writable grants can be written, and only the allow-listed
 * environment passes. Without bubblewrap they are refused (`command_isolation_unavailable`),
 * unless the primary owner allowed unsandboxed commands for other owners (setting
 * `commands.allowUnsandboxedOwners`): then they run as the host user with the allow-listed
 * environment, and can read what the host user can.
 */

registerErrors({ command_isolation_unavailable: errorSpecOf(403) });

/** How commands of non-primary owners are isolated on this host. */
export interface OwnerIsolation {
  /** The owner whose commands run unsandboxed (the host's primary owner). */
  primaryOwner: string;
  /** bubblewrap and the hardening flags that work here; undefined when bubblewrap is unavailable. */
  bwrap?: { path: string; hardening?: readonly string[] };
  /** Why bubblewrap is unavailable (for the error message). */
  unavailableReason?: string;
  /** The host user's home directory (hidden from other owners' commands). */
  userHome?: string;
  /** Whether the primary owner allowed unsandboxed commands for other owners. */
  unsandboxedAllowed: () => Promise<boolean>;
}

export type CommandMode = 'host' | 'sandbox' | 'unsandboxed-owner';

/** How `owner`'s commands run; throws before any side effect when they cannot be isolated. */
export async function commandMode(isolation: OwnerIsolation | undefined, owner: string): Promise<CommandMode> {
  if (!isolation || owner === isolation.primaryOwner) return 'host';
  if (isolation.bwrap) return 'sandbox';
  if (await isolation.unsandboxedAllowed()) return 'unsandboxed-owner';
  throw new FengYuError('command_isolation_unavailable', { owner, reason: isolation.unavailableReason ?? 'bubblewrap is not available' });
}

/** The scratch directory of a run (or of an owner's calls outside a run). */
export function scratchDir(home: string, ctx: { runId?: string; owner: string }): string {
  const id = ctx.runId ?? `adhoc-${ctx.owner.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  return join(home, 'runs', id, 'work');
}

/** One program started on behalf of an owner (a shell command, a hook, an MCP stdio server). */
export interface OwnerProgram {
  mode: CommandMode;
  isolation?: OwnerIsolation;
  /** FENGYU_HOME. */
  home: string;
  /** The host's environment. */
  hostEnv: Readonly<Record<string, string | undefined>>;
  command: string;
  args: readonly string[];
  cwd: string;
  scratch: string;
  grants: readonly FileGrant[];
  runId?: string;
  /** Variables the caller sets (FENGYU_RUN_ID, FENGYU_HOOK_*, an MCP server's configured env). */
  extraEnv?: Record<string, string>;
  stdin?: 'ignore' | 'pipe';
}

export interface ShellCommand extends Omit<OwnerProgram, 'command' | 'args'> {
  /** The shell (`bash`, `/bin/sh`) and the command line it runs with `-c`. */
  shell: string;
  script: string;
}

/**
 * Variables the dynamic loader (glibc) reads before `main`: set on bubblewrap itself, they would
 * run the owner's code outside the sandbox. They are given to the program inside with
 * `--setenv` instead (glibc's list of variables it drops for set-uid programs, plus `LD_*`).
 */
const LOADER_ENV = /^(LD_.*|GCONV_PATH|GETCONF_DIR|HOSTALIASES|LOCALDOMAIN|LOCPATH|MALLOC_.*|NIS_PATH|NLSPATH|RESOLV_HOST_CONF|RES_OPTIONS|TMPDIR|TZDIR|GLIBC_TUNABLES)$/;

/** Pure apart from reading where /etc/resolv.conf points: the spawn spec of one owner's program. */
export function ownerProgramSpec(c: OwnerProgram): SpawnSpec {
  const extra = c.extraEnv ?? {};
  const common = { cwd: c.cwd, runId: c.runId, stdin: c.stdin };
  if (c.mode === 'host') return { ...common, command: c.command, args: [...c.args], env: { ...withoutHostToken(c.hostEnv), ...extra } };
  const bwrap = c.isolation?.bwrap;
  if (c.mode === 'unsandboxed-owner' || !bwrap) return { ...common, command: c.command, args: [...c.args], env: allowListedEnv(c.hostEnv, { HOME: c.scratch, TMPDIR: '/tmp', ...extra }) };
  // Values stay out of bubblewrap's command line (readable by every local user) unless the
  // loader would act on them in bubblewrap itself.
  const inside = Object.entries({ TMPDIR: '/tmp', ...extra }).filter(([k]) => LOADER_ENV.test(k));
  const outside = Object.fromEntries(Object.entries(extra).filter(([k]) => !LOADER_ENV.test(k)));
  const env = allowListedEnv(c.hostEnv, { HOME: c.scratch, ...outside });
  const box = { home: c.home, userHome: c.isolation?.userHome, scratch: c.scratch, grants: c.grants, cwd: c.cwd, keep: resolverPaths() };
  const setenv = inside.flatMap(([k, v]) => ['--setenv', k, v]);
  return { ...common, command: bwrap.path, args: [...commandBwrapArgs(box, bwrap.hardening), ...setenv, '--', c.command, ...c.args], env, diesWithParent: true };
}

/** The spawn spec of one shell command line (`<shell> -c <script>`). */
export function shellSpec(c: ShellCommand): SpawnSpec {
  const { shell, script, ...rest } = c;
  return ownerProgramSpec({ ...rest, command: shell, args: ['-c', script] });
}
