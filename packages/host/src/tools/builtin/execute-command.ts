import { mkdir, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, resolve } from 'node:path';
import { errorSpecOf, FengYuError, registerErrors, stableHash } from '@fengyu/protocol';
import { isInside } from '../../files/grant-paths';
import { allowListedEnv, withoutHostToken } from '../../process/env';
import { defaultProcessGroups, type ProcessGroups, runBounded, type SpawnSpec } from '../../process/spawn';
import { commandBwrapArgs, resolverPaths } from '../../plugins/sandbox';
import type { Tool, ToolContext } from '../tool';

/**
 * `execute_command` (effect `command`): runs one command line with `bash -c` in a working
 * directory the run grants (a writable directory grant, else the run's scratch directory
 * `$FENGYU_HOME/runs/<runId>/work`), in its own process group that dies with the host, with a
 * timeout, capped output and cancellation (SIGTERM, then SIGKILL of the whole group).
 *
 * Owners are isolated: the primary owner's commands run as the host user with the host's
 * environment minus the host token. Any other owner's commands run in bubblewrap, where
 * FENGYU_HOME (token, database, secrets) and the host user's home directory are empty, other
 * processes are invisible and only the allow-listed environment passes. Without bubblewrap
 * they are refused, unless the primary owner allowed unsandboxed commands for other owners
 * (setting `commands.allowUnsandboxedOwners`).
 *
 * The permission guard has decided before `invoke` is called (the runner and chat call tools
 * only through it). A non-zero exit code is a result (`exitCode`), not a failure: the model
 * reads stderr and decides. Failing to start, a cwd outside the grants, or cancellation throw.
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

export interface ExecuteCommandDeps {
  /** FENGYU_HOME: scratch directories live under `runs/<runId>/work`. */
  home: string;
  /** Base environment of commands (the host's; the host token is never passed on). */
  env: Readonly<Record<string, string | undefined>>;
  /** Per-stream output cap in bytes (default 256 KiB). */
  outputCap?: number;
  /** Grace between SIGTERM and SIGKILL (default 2 s). */
  killGraceMs?: number;
  /** The host's process registry. */
  groups?: ProcessGroups;
  /** Owner isolation; when omitted every owner is treated as the primary one (tests of the tool alone). */
  isolation?: OwnerIsolation;
}

export interface ExecuteCommandResult {
  exitCode: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  timedOut: boolean;
  cwd: string;
}

const DEFAULT_TIMEOUT_S = 120;
const MAX_TIMEOUT_S = 3600;

const inputSchema = {
  type: 'object',
  required: ['command'],
  additionalProperties: false,
  properties: {
    command: { type: 'string', minLength: 1, maxLength: 65536, description: 'A bash command line.' },
    cwd: { type: 'string', minLength: 1, description: 'Working directory: inside a directory granted to the run (relative paths start there).' },
    timeoutSeconds: { type: 'integer', minimum: 1, maximum: MAX_TIMEOUT_S, description: `Default ${DEFAULT_TIMEOUT_S}.` },
  },
};

const outputSchema = {
  type: 'object',
  required: ['exitCode', 'stdout', 'stderr', 'truncated', 'timedOut'],
  properties: {
    exitCode: { type: ['integer', 'null'] },
    signal: { type: ['string', 'null'] },
    stdout: { type: 'string' },
    stderr: { type: 'string' },
    truncated: { type: 'boolean' },
    timedOut: { type: 'boolean' },
    cwd: { type: 'string' },
  },
};

export function createExecuteCommandTool(deps: ExecuteCommandDeps): Tool {
  return {
    name: 'execute_command',
    description:
      'Run a bash command line in the run\'s working directory and return its exit code, stdout and stderr (each capped at 256 KiB). A non-zero exit code is returned, not raised. Every command passes the permission rules; dangerous commands always need approval.',
    inputSchema,
    outputSchema,
    effect: 'command',
    source: 'builtin',
    id: 'builtin:execute_command',
    schemaRevision: stableHash({ inputSchema, outputSchema }),
    idempotent: false,
    available: true,
    timeoutSeconds: MAX_TIMEOUT_S,
    async invoke(args: Record<string, unknown>, ctx: ToolContext): Promise<ExecuteCommandResult> {
      const command = args.command;
      if (typeof command !== 'string' || command.trim() === '') throw new FengYuError('invalid_request', { reason: '"command" must be a non-empty string' });
      const seconds = clampTimeout(args.timeoutSeconds);
      const mode = await isolationMode(deps.isolation, ctx.owner);
      const cwd = await workingDirectory(deps.home, ctx, typeof args.cwd === 'string' ? args.cwd : undefined);
      return run(deps, command, cwd, seconds, ctx, mode);
    },
  };
}

type Mode = 'host' | 'sandbox' | 'unsandboxed-owner';

/** How this owner's commands run; refused before any side effect when they cannot be isolated. */
async function isolationMode(isolation: OwnerIsolation | undefined, owner: string): Promise<Mode> {
  if (!isolation || owner === isolation.primaryOwner) return 'host';
  if (isolation.bwrap) return 'sandbox';
  if (await isolation.unsandboxedAllowed()) return 'unsandboxed-owner';
  throw new FengYuError('command_isolation_unavailable', { owner, reason: isolation.unavailableReason ?? 'bubblewrap is not available' });
}

function clampTimeout(v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) return DEFAULT_TIMEOUT_S;
  return Math.min(MAX_TIMEOUT_S, Math.max(1, Math.floor(v)));
}

/** The scratch directory of a run (or of an owner's ad-hoc calls outside a run). */
export function scratchDir(home: string, ctx: Pick<ToolContext, 'runId' | 'owner'>): string {
  const id = ctx.runId ?? `adhoc-${ctx.owner.replace(/[^A-Za-z0-9_-]/g, '_')}`;
  return join(home, 'runs', id, 'work');
}

async function workingDirectory(home: string, ctx: ToolContext, requested: string | undefined): Promise<string> {
  const writable = ctx.grants.filter((g) => g.kind === 'directory' && g.access !== 'read').map((g) => g.path);
  const scratch = scratchDir(home, ctx);
  await mkdir(scratch, { recursive: true });
  const roots = await Promise.all([...writable, scratch].map((p) => realpath(p).catch(() => undefined)));
  const allowed = roots.filter((p): p is string => p !== undefined);
  const base = allowed[0] as string;
  if (requested === undefined) return base;
  const target = isAbsolute(requested) ? requested : resolve(base, requested);
  let real: string;
  try {
    real = await realpath(target);
    if (!(await stat(real)).isDirectory()) throw new Error('not a directory');
  } catch {
    throw new FengYuError('command_cwd_not_granted', { cwd: requested });
  }
  if (!allowed.some((root) => isInside(root, real))) throw new FengYuError('command_cwd_not_granted', { cwd: requested });
  return real;
}

function spawnSpec(deps: ExecuteCommandDeps, command: string, cwd: string, ctx: ToolContext, mode: Mode): SpawnSpec {
  const runEnv: Record<string, string> = ctx.runId ? { FENGYU_RUN_ID: ctx.runId } : {};
  if (mode === 'host') return { command: 'bash', args: ['-c', command], cwd, env: { ...withoutHostToken(deps.env), ...runEnv }, runId: ctx.runId };
  const scratch = scratchDir(deps.home, ctx);
  const env = allowListedEnv(deps.env, { HOME: scratch, TMPDIR: '/tmp', ...runEnv });
  const bwrap = deps.isolation?.bwrap;
  if (mode === 'unsandboxed-owner' || !bwrap) return { command: 'bash', args: ['-c', command], cwd, env, runId: ctx.runId };
  const box = { home: deps.home, userHome: deps.isolation?.userHome, scratch, grants: ctx.grants, cwd, keep: resolverPaths() };
  return { command: bwrap.path, args: [...commandBwrapArgs(box, bwrap.hardening), '--', 'bash', '-c', command], cwd, env, runId: ctx.runId, diesWithParent: true };
}

async function run(deps: ExecuteCommandDeps, command: string, cwd: string, seconds: number, ctx: ToolContext, mode: Mode): Promise<ExecuteCommandResult> {
  if (ctx.signal.aborted) throw new FengYuError('tool_cancelled', { name: 'execute_command' });
  const spec = spawnSpec(deps, command, cwd, ctx, mode);
  const r = await runBounded(deps.groups ?? defaultProcessGroups(), spec, {
    timeoutMs: seconds * 1000,
    outputCap: deps.outputCap ?? 256 * 1024,
    signal: ctx.signal,
    killGraceMs: deps.killGraceMs ?? 2000,
  });
  if (r.spawnError) throw new FengYuError('command_spawn_failed', { reason: r.spawnError.message }, undefined, { cause: r.spawnError });
  if (r.cancelled && !r.timedOut) throw new FengYuError('tool_cancelled', { name: 'execute_command' });
  return { exitCode: r.exitCode, signal: r.signal, stdout: r.stdout, stderr: r.stderr, truncated: r.truncated, timedOut: r.timedOut, cwd };
}
