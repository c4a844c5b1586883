import { mkdir, realpath, stat } from 'node:fs/promises';
import { isAbsolute, resolve } from 'node:path';
import { errorSpecOf, FengYuError, registerErrors, stableHash } from '@fengyu/protocol';
import type { CrashPoint } from '../../config/crash-points';
import { isInside } from '../../files/grant-paths';
import { type CommandMode, commandMode, type OwnerIsolation, scratchDir, shellSpec } from '../../process/owner-commands';
import { defaultProcessGroups, type ProcessGroups, runBounded } from '../../process/spawn';
import type { Tool, ToolContext } from '../tool';

/**
 * `execute_command` (effect `command`): runs one command line with `bash -c` in a working
 * directory the run grants (a writable directory grant, else the run's scratch directory
 * `$FENGYU_HOME/runs/<runId>/work`), in its own process group that dies with the host, with a
 * timeout, capped output and cancellation (SIGTERM, then SIGKILL of the whole group).
 *
 * Owners are isolated (see `process/owner-commands.ts`): other owners' commands run in
 * bubblewrap without FENGYU_HOME, or are refused where bubblewrap is unavailable.
 *
 * The permission guard has decided before `invoke` is called (the runner and chat call tools
 * only through it). A command that does not end with status 0 fails the call: a
 * non-zero exit is `command_exit_nonzero` (`params.exitCode`), its own timeout `command_timeout`,
 * a signal from outside `command_killed`; the message ends with the last lines of stderr (else
 * stdout) and the error's `details.result` is the whole result, which the runner keeps in the
 * step's execution. Failing to start, a cwd outside the grants, or cancellation throw too.
 */

registerErrors({
  command_exit_nonzero: errorSpecOf(422),
  command_timeout: errorSpecOf(504, true),
  command_killed: errorSpecOf(500),
});

/** How much of a failed command's output its error message ends with. */
const TAIL_LINES = 20;
const TAIL_CHARS = 2000;

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
  /** Crash tests (docs/reliability.md): `command-running`. */
  crashPoint?: CrashPoint;
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
      'Run a bash command line in the run\'s working directory and return its stdout and stderr (each capped at 256 KiB). A non-zero exit status fails the call (the error ends with the last lines of stderr/stdout); append `|| true` to accept one. Every command passes the permission rules; dangerous commands always need approval.',
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
      const mode = await commandMode(deps.isolation, ctx.owner);
      const cwd = await workingDirectory(deps.home, ctx, typeof args.cwd === 'string' ? args.cwd : undefined);
      return run(deps, command, cwd, seconds, ctx, mode);
    },
  };
}

function clampTimeout(v: unknown): number {
  if (typeof v !== 'number' || !Number.isFinite(v)) return DEFAULT_TIMEOUT_S;
  return Math.min(MAX_TIMEOUT_S, Math.max(1, Math.floor(v)));
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

async function run(deps: ExecuteCommandDeps, command: string, cwd: string, seconds: number, ctx: ToolContext, mode: CommandMode): Promise<ExecuteCommandResult> {
  if (ctx.signal.aborted) throw new FengYuError('tool_cancelled', { name: 'execute_command' });
  const spec = shellSpec({
    mode,
    isolation: deps.isolation,
    home: deps.home,
    hostEnv: deps.env,
    shell: 'bash',
    script: command,
    cwd,
    scratch: scratchDir(deps.home, ctx),
    grants: ctx.grants,
    runId: ctx.runId,
    extraEnv: ctx.runId ? { FENGYU_RUN_ID: ctx.runId } : {},
  });
  const r = await runBounded(deps.groups ?? defaultProcessGroups(), spec, {
    timeoutMs: seconds * 1000,
    outputCap: deps.outputCap ?? 256 * 1024,
    signal: ctx.signal,
    killGraceMs: deps.killGraceMs ?? 2000,
    ...(deps.crashPoint ? { onStarted: () => deps.crashPoint?.('command-running') } : {}),
  });
  if (r.spawnError) throw new FengYuError('command_spawn_failed', { reason: r.spawnError.message }, undefined, { cause: r.spawnError });
  if (r.cancelled && !r.timedOut) throw new FengYuError('tool_cancelled', { name: 'execute_command' });
  const result: ExecuteCommandResult = { exitCode: r.exitCode, signal: r.signal, stdout: r.stdout, stderr: r.stderr, truncated: r.truncated, timedOut: r.timedOut, cwd };
  const failure = commandFailure(result, seconds);
  if (failure) throw failure;
  return result;
}

/** The failure of a command that did not end with status 0, or undefined when it did. */
export function commandFailure(result: ExecuteCommandResult, seconds: number): FengYuError | undefined {
  if (result.exitCode === 0 && !result.timedOut) return undefined;
  const tail = outputTail(result);
  const details = { result };
  if (result.timedOut) return new FengYuError('command_timeout', { seconds, tail }, details);
  if (result.exitCode === null) return new FengYuError('command_killed', { signal: result.signal ?? 'unknown', tail }, details);
  return new FengYuError('command_exit_nonzero', { exitCode: result.exitCode, tail }, details);
}

/** The last lines of stderr, else of stdout, on a line of their own (empty when both are empty). */
export function outputTail(result: Pick<ExecuteCommandResult, 'stdout' | 'stderr'>): string {
  const text = (result.stderr.trim() ? result.stderr : result.stdout).trimEnd();
  if (!text) return '';
  let tail = text.split('\n').slice(-TAIL_LINES).join('\n');
  if (tail.length > TAIL_CHARS) tail = `…${tail.slice(-TAIL_CHARS)}`;
  return `\n${tail}`;
}
