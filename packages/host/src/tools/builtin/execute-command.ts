import { spawn } from 'node:child_process';
import { mkdir, realpath, stat } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { FengYuError, stableHash } from '@fengyu/protocol';
import type { Tool, ToolContext } from '../tool';

/**
 * `execute_command` (effect `command`, SPEC §4): runs one command line with `bash -c` in a
 * working directory the run grants (a writable directory grant, else the run's scratch
 * directory `$FENGYU_HOME/runs/<runId>/work`), in its own process group, with a timeout,
 * capped output and cancellation (SIGTERM, then SIGKILL of the whole group).
 *
 * The permission guard has decided before `invoke` is called (the runner and chat call tools
 * only through it). A non-zero exit code is a result (`exitCode`), not a failure: the model
 * reads stderr and decides. Failing to start, a cwd outside the grants, or cancellation throw.
 */

export interface ExecuteCommandDeps {
  /** FENGYU_HOME: scratch directories live under `runs/<runId>/work`. */
  home: string;
  /** Base environment of commands (the host's; the host token is never passed on). */
  env: Readonly<Record<string, string | undefined>>;
  /** Per-stream output cap in bytes (default 256 KiB). */
  outputCap?: number;
  /** Grace between SIGTERM and SIGKILL (default 2 s). */
  killGraceMs?: number;
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
      const cwd = await workingDirectory(deps.home, ctx, typeof args.cwd === 'string' ? args.cwd : undefined);
      return run(deps, command, cwd, seconds, ctx);
    },
  };
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
  if (!allowed.some((root) => inside(root, real))) throw new FengYuError('command_cwd_not_granted', { cwd: requested });
  return real;
}

function inside(root: string, p: string): boolean {
  const rel = relative(root, p);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

function run(deps: ExecuteCommandDeps, command: string, cwd: string, seconds: number, ctx: ToolContext): Promise<ExecuteCommandResult> {
  const cap = deps.outputCap ?? 256 * 1024;
  const grace = deps.killGraceMs ?? 2000;
  return new Promise((resolvePromise, reject) => {
    if (ctx.signal.aborted) return reject(new FengYuError('tool_cancelled', { name: 'execute_command' }));
    const env: Record<string, string> = {};
    for (const [k, v] of Object.entries(deps.env)) if (v !== undefined && k !== 'FENGYU_TOKEN') env[k] = v;
    if (ctx.runId) env.FENGYU_RUN_ID = ctx.runId;
    const child = spawn('bash', ['-c', command], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    const out = { stdout: [] as Buffer[], stderr: [] as Buffer[], sizes: { stdout: 0, stderr: 0 }, truncated: false };
    let timedOut = false;
    let cancelled = false;
    let killTimer: NodeJS.Timeout | undefined;
    const signalGroup = (sig: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, sig);
      } catch {
        /* the group is gone */
      }
    };
    const terminate = () => {
      signalGroup('SIGTERM');
      killTimer ??= setTimeout(() => signalGroup('SIGKILL'), grace);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      terminate();
    }, seconds * 1000);
    const onAbort = () => {
      cancelled = true;
      terminate();
    };
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    const collect = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
      const room = cap - out.sizes[stream];
      if (room <= 0) {
        out.truncated = true;
        return;
      }
      if (chunk.length > room) out.truncated = true;
      const piece = chunk.length > room ? chunk.subarray(0, room) : chunk;
      out[stream].push(piece);
      out.sizes[stream] += piece.length;
    };
    child.stdout.on('data', collect('stdout'));
    child.stderr.on('data', collect('stderr'));
    // Background children must not outlive the call (or hold its pipes open).
    child.on('exit', () => signalGroup('SIGKILL'));
    child.on('error', (err) => {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
      reject(new FengYuError('command_spawn_failed', { reason: err.message }, undefined, { cause: err }));
    });
    child.on('close', (code, sig) => {
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      ctx.signal.removeEventListener('abort', onAbort);
      if (cancelled && !timedOut) return reject(new FengYuError('tool_cancelled', { name: 'execute_command' }));
      resolvePromise({
        exitCode: code,
        signal: sig,
        stdout: Buffer.concat(out.stdout).toString('utf8'),
        stderr: Buffer.concat(out.stderr).toString('utf8'),
        truncated: out.truncated,
        timedOut,
        cwd,
      });
    });
  });
}
