import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';

/**
 * The one way the host starts child processes (commands, command hooks, plugin workers).
 *
 * Every child:
 * - leads its own process group, so a signal reaches the command and everything it forked;
 * - dies with the host: it is started through `setpriv --pdeathsig SIGKILL` (util-linux) unless
 *   it already dies with its parent by other means (bubblewrap `--die-with-parent`), and its
 *   group is recorded with a reaper process that SIGKILLs every recorded group when the host's
 *   end of its pipe closes (the host exited, however it exited);
 * - gets only the environment its caller passes (see `env.ts` for the allow-list);
 * - is stopped by `terminate`: SIGTERM to the group, then SIGKILL after a grace period. When
 *   the group leader exits, what is left of its group is SIGKILLed (no stray background jobs).
 *
 * Entry points:
 * - `processGroupsFor(scope)`: the registry of one host (created on first use, closed with it).
 * - `ProcessGroups.spawn(spec)`: a long-lived child (plugin workers).
 * - `runBounded(groups, spec, limits)`: run to completion with a timeout, cancellation and
 *   stdout/stderr capped at a byte limit (commands, hooks).
 * - `killRunProcesses(runId, { graceMs })`: SIGTERM every process group a run started, then
 *   SIGKILL after the grace (default 2 s, at most 5 s); resolves with the number of groups once
 *   their leaders are gone. Used to escalate a cancel that the run did not honour.
 * - `ProcessGroups.close()`: the same for every group of one host, on a clean stop.
 *
 * Not covered: a process that deliberately leaves its group (`setsid`) is out of reach here
 * unless it runs inside a bubblewrap PID namespace, which dies as a whole with its parent.
 */

export interface SpawnSpec {
  command: string;
  args: readonly string[];
  cwd: string;
  /** The complete environment of the child (nothing is inherited from the host). */
  env: Record<string, string>;
  /** `pipe` when the caller writes to stdin; default `ignore`. */
  stdin?: 'ignore' | 'pipe';
  /** The run this process works for: `killRunProcesses(runId)` reaches it. */
  runId?: string;
  /** The command already dies with its parent (bubblewrap `--die-with-parent`). */
  diesWithParent?: boolean;
}

export interface ExitStatus {
  code: number | null;
  signal: NodeJS.Signals | null;
}

const DEFAULT_GRACE_MS = 2000;
const MAX_GRACE_MS = 5000;

const SETPRIV_CANDIDATES = ['/usr/bin/setpriv', '/bin/setpriv', '/usr/sbin/setpriv'];
const AWK_CANDIDATES = ['/usr/bin/awk', '/bin/awk'];
let setprivPath: string | null | undefined;
let awkPath: string | null | undefined;

function firstExisting(paths: readonly string[]): string | null {
  return paths.find((p) => existsSync(p)) ?? null;
}

/** `setpriv` when this system has it (Linux with util-linux), else null. */
export function setprivBinary(): string | null {
  if (setprivPath === undefined) setprivPath = process.platform === 'linux' ? firstExisting(SETPRIV_CANDIDATES) : null;
  return setprivPath;
}

function clampGrace(ms: number | undefined): number {
  if (ms === undefined || !Number.isFinite(ms)) return DEFAULT_GRACE_MS;
  return Math.min(MAX_GRACE_MS, Math.max(0, ms));
}

/** One child process leading its own process group. */
export class ProcessGroup {
  readonly child: ChildProcess;
  /** Resolves once the leader has exited and its stdio has closed. */
  readonly closed: Promise<ExitStatus>;
  /** Resolves once the leader has exited (stdio may still be open). */
  readonly exited: Promise<ExitStatus>;
  private leaderGone = false;
  private killTimer?: NodeJS.Timeout;

  constructor(
    readonly spec: SpawnSpec,
    onGone: (group: ProcessGroup) => void,
  ) {
    const setpriv = spec.diesWithParent ? null : setprivBinary();
    const [command, args] = setpriv ? [setpriv, ['--pdeathsig', 'SIGKILL', '--', spec.command, ...spec.args]] : [spec.command, [...spec.args]];
    this.child = spawn(command, args, { cwd: spec.cwd, env: spec.env, stdio: [spec.stdin ?? 'ignore', 'pipe', 'pipe'], detached: true });
    this.exited = new Promise((resolve) => {
      this.child.once('exit', (code, signal) => {
        this.leaderGone = true;
        // What the leader left behind in its group must not outlive it.
        this.signal('SIGKILL');
        if (this.killTimer) clearTimeout(this.killTimer);
        resolve({ code, signal });
      });
      this.child.once('error', () => {
        this.leaderGone = true;
        resolve({ code: null, signal: null });
      });
    });
    this.closed = new Promise((resolve) => {
      this.child.once('close', (code, signal) => resolve({ code, signal }));
      this.child.once('error', () => resolve({ code: null, signal: null }));
    });
    void this.closed.then(() => onGone(this));
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  get running(): boolean {
    return !this.leaderGone;
  }

  /** Sends `sig` to the whole group (no-op once the group is gone). */
  signal(sig: NodeJS.Signals): void {
    const pid = this.child.pid;
    if (!pid) return;
    try {
      process.kill(-pid, sig);
    } catch {
      /* the group is gone */
    }
  }

  /** SIGTERM to the group, SIGKILL after `graceMs`; resolves once the leader has exited. */
  async terminate(graceMs?: number): Promise<ExitStatus> {
    if (!this.leaderGone) {
      this.signal('SIGTERM');
      this.killTimer ??= setTimeout(() => this.signal('SIGKILL'), clampGrace(graceMs));
      this.killTimer.unref?.();
    }
    return this.exited;
  }
}

/**
 * The reaper: a small awk process holding the list of live group ids. The host writes `+pgid`
 * when a group starts and `-pgid` when it is gone; when its stdin reaches end-of-file (the
 * host exited or closed it) it SIGKILLs every group still listed. It leads its own group, so a
 * terminal's Ctrl-C does not stop it before it has done its work.
 */
class Reaper {
  private child?: ChildProcess;
  private failed = false;

  add(pgid: number): void {
    this.write(`+ ${pgid}\n`);
  }

  remove(pgid: number): void {
    this.write(`- ${pgid}\n`);
  }

  close(): void {
    this.child?.stdin?.end();
    this.child = undefined;
  }

  private write(line: string): void {
    const child = this.start();
    if (!child?.stdin?.writable) return;
    child.stdin.write(line);
  }

  private start(): ChildProcess | undefined {
    if (this.child || this.failed) return this.child;
    if (awkPath === undefined) awkPath = process.platform === 'win32' ? null : firstExisting(AWK_CANDIDATES);
    if (!awkPath) {
      this.failed = true;
      return undefined;
    }
    const program = '$1 == "+" && $2 ~ /^[0-9]+$/ { g[$2] = 1 } $1 == "-" { delete g[$2] } END { for (id in g) system("kill -s KILL -- -" id " 2>/dev/null") }';
    const child = spawn(awkPath, [program], { stdio: ['pipe', 'ignore', 'ignore'], detached: true, env: { PATH: '/usr/bin:/bin' } });
    child.on('error', () => {
      this.failed = true;
      this.child = undefined;
    });
    child.stdin?.on('error', () => {
      /* the reaper is gone: groups still die through pdeathsig and close() */
    });
    child.unref();
    (child.stdin as unknown as { unref?: () => void } | null)?.unref?.();
    this.child = child;
    return child;
  }
}

/** Every process group one host started. */
export class ProcessGroups {
  private readonly groups = new Set<ProcessGroup>();
  private readonly reaper = new Reaper();
  private closing = false;

  constructor() {
    registries.add(this);
  }

  get size(): number {
    return this.groups.size;
  }

  spawn(spec: SpawnSpec): ProcessGroup {
    if (this.closing) throw new Error('the host is stopping: no new processes');
    const group = new ProcessGroup(spec, (g) => {
      this.groups.delete(g);
      if (g.pid) this.reaper.remove(g.pid);
    });
    if (group.pid) {
      this.groups.add(group);
      this.reaper.add(group.pid);
    }
    return group;
  }

  /** The live groups a run started. */
  ofRun(runId: string): ProcessGroup[] {
    return [...this.groups].filter((g) => g.spec.runId === runId && g.running);
  }

  /** SIGTERM then SIGKILL every group of `runId`; the number of groups signalled. */
  async killRun(runId: string, graceMs?: number): Promise<number> {
    const mine = this.ofRun(runId);
    await Promise.all(mine.map((g) => g.terminate(graceMs)));
    return mine.length;
  }

  /** Clean stop: SIGTERM then SIGKILL every group, then release the reaper. */
  async close(graceMs?: number): Promise<void> {
    this.closing = true;
    await Promise.all([...this.groups].map((g) => g.terminate(graceMs)));
    this.reaper.close();
    registries.delete(this);
  }
}

const registries = new Set<ProcessGroups>();

/**
 * Kills every process group the run `runId` started, in every host of this process: SIGTERM,
 * then SIGKILL after `graceMs` (default 2 s, clamped to [0, 5 s]). Resolves with the number of
 * groups signalled, once each leader has exited. Run ids are unique, so no other run is touched.
 */
export async function killRunProcesses(runId: string, options: { graceMs?: number } = {}): Promise<number> {
  const counts = await Promise.all([...registries].map((r) => r.killRun(runId, options.graceMs)));
  return counts.reduce((a, b) => a + b, 0);
}

let fallback: ProcessGroups | undefined;

/** The registry for callers outside a host (tools run by tests or one-shot commands). */
export function defaultProcessGroups(): ProcessGroups {
  fallback ??= new ProcessGroups();
  return fallback;
}

const byScope = new WeakMap<object, ProcessGroups>();

/**
 * The registry of one host. `scope` is any object that lives as long as the host (its config);
 * the registry is closed (groups terminated) by the host's `onClose`.
 */
export function processGroupsFor(scope: object, onClose?: (fn: () => Promise<void>) => void): ProcessGroups {
  let groups = byScope.get(scope);
  if (!groups) {
    const created = new ProcessGroups();
    groups = created;
    byScope.set(scope, created);
    onClose?.(() => created.close());
  }
  return groups;
}

export interface BoundedLimits {
  /** Kill the group after this long (then `timedOut`). */
  timeoutMs: number;
  /** Per-stream capture cap in bytes. */
  outputCap: number;
  signal?: AbortSignal;
  killGraceMs?: number;
  /** Written to stdin, then stdin is closed (requires `stdin: 'pipe'`). */
  input?: string;
  /** Called once the process group has started (crash tests: `command-running`). */
  onStarted?: () => void;
}

export interface BoundedResult {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  timedOut: boolean;
  cancelled: boolean;
  /** Set when the process could not be started. */
  spawnError?: Error;
}

/** Runs one command to completion with a timeout, cancellation and capped output. */
export function runBounded(groups: ProcessGroups, spec: SpawnSpec, limits: BoundedLimits): Promise<BoundedResult> {
  return new Promise((resolve) => {
    const group = groups.spawn(spec);
    const { child } = group;
    const out = { stdout: [] as Buffer[], stderr: [] as Buffer[], sizes: { stdout: 0, stderr: 0 }, truncated: false };
    let timedOut = false;
    let cancelled = false;
    let spawnError: Error | undefined;
    const timer = setTimeout(() => {
      timedOut = true;
      void group.terminate(limits.killGraceMs);
    }, limits.timeoutMs);
    const onAbort = () => {
      cancelled = true;
      void group.terminate(limits.killGraceMs);
    };
    limits.signal?.addEventListener('abort', onAbort, { once: true });
    const collect = (stream: 'stdout' | 'stderr') => (chunk: Buffer) => {
      const room = limits.outputCap - out.sizes[stream];
      if (room <= 0) {
        out.truncated = true;
        return;
      }
      const piece = chunk.length > room ? chunk.subarray(0, room) : chunk;
      if (piece !== chunk) out.truncated = true;
      out[stream].push(piece);
      out.sizes[stream] += piece.length;
    };
    child.stdout?.on('data', collect('stdout'));
    child.stderr?.on('data', collect('stderr'));
    child.on('error', (e) => {
      spawnError = e;
    });
    if (child.stdin) {
      child.stdin.on('error', () => {
        /* the command may exit without reading its input */
      });
      child.stdin.end(limits.input ?? '');
    }
    void group.closed.then((status) => {
      clearTimeout(timer);
      limits.signal?.removeEventListener('abort', onAbort);
      resolve({
        exitCode: status.code,
        signal: status.signal,
        stdout: Buffer.concat(out.stdout).toString('utf8'),
        stderr: Buffer.concat(out.stderr).toString('utf8'),
        truncated: out.truncated,
        timedOut,
        cancelled,
        ...(spawnError ? { spawnError } : {}),
      });
    });
    if (limits.signal?.aborted) onAbort();
    limits.onStarted?.();
  });
}
