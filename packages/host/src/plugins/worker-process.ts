import type { ChildProcess } from 'node:child_process';
import type { Logger } from 'pino';
import { defaultProcessGroups, type ProcessGroup, type ProcessGroups } from '../process/spawn';
import { type CallOptions, RpcConnection } from './rpc-connection';
import type { SpawnSpec } from './sandbox';

/**
 * One running worker: a child process speaking JSON-RPC on stdio. Its stderr goes to the host
 * log (each line truncated, at most `maxStderrLines` per worker) and the last few KiB are kept
 * for error messages. `stop()` escalates SIGTERM → SIGKILL after a grace period. Started through
 * the host's spawn helper: own process group, dies with the host.
 */

export interface WorkerProcessOptions {
  spawn: SpawnSpec;
  cwd: string;
  env: Record<string, string>;
  logger: Logger;
  /** The host's process registry (a private one when omitted). */
  groups?: ProcessGroups;
  /** The worker already dies with the host by other means (bubblewrap `--die-with-parent`). */
  diesWithParent?: boolean;
  maxLineChars?: number;
  killGraceMs?: number;
  maxStderrLines?: number;
  onExit?: (reason: string) => void;
  /** Crash tests: called once requests were written to the worker. */
  onRequestWritten?: () => void;
  /** Answers the worker's own requests (`$/secrets/*`). */
  onRequest?: (method: string, params: unknown) => Promise<unknown>;
}

const STDERR_TAIL = 4096;

export class WorkerProcess {
  readonly child: ChildProcess;
  private readonly group: ProcessGroup;
  readonly rpc: RpcConnection;
  private stderrTail = '';
  private stderrLines = 0;
  private exitReason?: string;
  private readonly exited: Promise<void>;
  lastUsed = Date.now();

  constructor(private readonly options: WorkerProcessOptions) {
    const groups = options.groups ?? defaultProcessGroups();
    this.group = groups.spawn({ command: options.spawn.command, args: options.spawn.args, cwd: options.cwd, env: options.env, stdin: 'pipe', diesWithParent: options.diesWithParent });
    this.child = this.group.child;
    const log = options.logger;
    this.rpc = new RpcConnection(this.child.stdin!, this.child.stdout!, {
      onLog: (level, message) => log[level === 'error' ? 'error' : level === 'warn' ? 'warn' : level === 'debug' ? 'debug' : 'info']({ worker: 'log' }, message),
      onGarbage: (line) => log.warn({ line }, 'plugin worker wrote a non-JSON-RPC line to stdout; ignored'),
      onFatal: (reason) => {
        log.error({ reason }, 'plugin worker broke the protocol; stopping it');
        void this.stop();
      },
      ...(options.onRequestWritten ? { onRequestWritten: options.onRequestWritten } : {}),
      ...(options.onRequest ? { onRequest: options.onRequest } : {}),
    }, options.maxLineChars);
    this.child.stderr!.setEncoding('utf8');
    this.child.stderr!.on('data', (chunk: string) => this.onStderr(chunk));
    this.exited = new Promise((resolve) => {
      this.child.on('error', (e) => {
        this.markExit(`the worker could not start: ${e.message}`);
        resolve();
      });
      this.child.on('exit', (code, signal) => {
        this.markExit(signal ? `the worker was killed by ${signal}` : `the worker exited with code ${code}`);
        resolve();
      });
    });
  }

  /** Running and still speaking the protocol. */
  get alive(): boolean {
    return this.exitReason === undefined && !this.rpc.isClosed;
  }

  get stderr(): string {
    return this.stderrTail;
  }

  /** One call; `lastUsed` is set now, and again by the caller when the call ends (`touch`). */
  call(method: string, params: unknown, options: CallOptions): Promise<unknown> {
    this.lastUsed = Date.now();
    return this.rpc.request(method, params, options);
  }

  touch(): void {
    this.lastUsed = Date.now();
  }

  /** SIGTERM, then SIGKILL after the grace period; resolves once the process is gone. */
  async stop(graceMs = this.options.killGraceMs ?? 2000): Promise<void> {
    if (this.exitReason !== undefined) return this.exited;
    this.child.stdin?.end();
    await Promise.all([this.group.terminate(graceMs), this.exited]);
  }

  private markExit(reason: string): void {
    if (this.exitReason !== undefined) return;
    const tail = this.stderrTail.trim().split('\n').slice(-3).join(' | ');
    this.exitReason = tail ? `${reason}: ${tail}` : reason;
    this.rpc.close(this.exitReason);
    this.options.onExit?.(this.exitReason);
  }

  private onStderr(chunk: string): void {
    this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL);
    const max = this.options.maxStderrLines ?? 1000;
    for (const line of chunk.split('\n')) {
      if (!line.trim()) continue;
      this.stderrLines++;
      if (this.stderrLines <= max) this.options.logger.info({ stream: 'stderr' }, line.slice(0, 2000));
      else if (this.stderrLines === max + 1) this.options.logger.warn('plugin worker stderr: further lines are not logged');
    }
  }
}
