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

export interface ShellCommand {
  mode: CommandMode;
  isolation?: OwnerIsolation;
  /** FENGYU_HOME. */
  home: string;
  /** The host's environment. */
  hostEnv: Readonly<Record<string, string | undefined>>;
  /** The shell (`bash`, `/bin/sh`) and the command line it runs with `-c`. */
  shell: string;
  script: string;
  cwd: string;
  scratch: string;
  grants: readonly FileGrant[];
  runId?: string;
  /** Variables the caller sets (FENGYU_RUN_ID, FENGYU_HOOK_*). */
  extraEnv?: Record<string, string>;
  stdin?: 'ignore' | 'pipe';
}

/** Pure apart from reading where /etc/resolv.conf points: the spawn spec of one shell command. */
export function shellSpec(c: ShellCommand): SpawnSpec {
  const extra = c.extraEnv ?? {};
  const common = { cwd: c.cwd, runId: c.runId, stdin: c.stdin };
  if (c.mode === 'host') return { ...common, command: c.shell, args: ['-c', c.script], env: { ...withoutHostToken(c.hostEnv), ...extra } };
  const env = allowListedEnv(c.hostEnv, { HOME: c.scratch, TMPDIR: '/tmp', ...extra });
  const bwrap = c.isolation?.bwrap;
  if (c.mode === 'unsandboxed-owner' || !bwrap) return { ...common, command: c.shell, args: ['-c', c.script], env };
  const box = { home: c.home, userHome: c.isolation?.userHome, scratch: c.scratch, grants: c.grants, cwd: c.cwd, keep: resolverPaths() };
  return { ...common, command: bwrap.path, args: [...commandBwrapArgs(box, bwrap.hardening), '--', c.shell, '-c', c.script], env, diesWithParent: true };
}
