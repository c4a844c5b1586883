import { FengYuError } from '@fengyu/protocol';
import { DEFAULT_OWNER } from '../http/auth';
import type { Logger } from 'pino';
import type { CrashPoint } from '../config/crash-points';
import { allowListedEnv } from '../process/env';
import type { ProcessGroups } from '../process/spawn';
import { type AbortWatch, callDeadlines } from '../tools/call-scope';
import type { FileGrant, ProgressFn } from '../tools/tool';
import { RpcCallError } from './rpc-connection';
import { grantKey, type SandboxBackend, workerCommand } from './sandbox';
import type { WorkerRequestHandler } from './plugin-secrets';
import { WorkerProcess } from './worker-process';
import './plugin-errors';

/**
 * Warm workers, one per enabled plugin version — and, when sandboxed, one per (plugin, grant
 * set), because bubblewrap binds are fixed at launch. Started on first use, stopped when idle.
 * Each call has a timeout; a timeout or cancellation is forwarded as `$/cancelRequest` and the
 * call rejects at once; a worker that still has not answered after a grace period is hung and
 * is killed, so the next call gets a fresh one. Crashes, garbage and oversized output fail the
 * calls in flight (`tool_failed`) and never reach the host.
 */

export interface WorkerTarget {
  pluginId: string;
  /**
   * The owner the worker works for (default: the primary owner). Each owner gets workers of its
   * own, with its own data directory and its own vault: one owner's plugin state (an e-mail
   * account, its password) never answers another owner's call.
   */
  owner?: string;
  version: string;
  root: string;
  dataDir: string;
  /** Worker entry relative to `root`. */
  worker: string;
  /** The manifest's `sandbox.network`. */
  network?: boolean;
}

export interface InvokeRequest {
  target: WorkerTarget;
  method: string;
  params: unknown;
  /** For error messages (`tool_failed` names the tool). */
  toolName: string;
  timeoutSeconds: number;
  signal?: AbortSignal;
  /** The call's cancellation without a signal (the runner's calls); used instead of `signal` when given. */
  abort?: AbortWatch;
  grants: readonly FileGrant[];
  onProgress?: ProgressFn;
}

export interface WorkerManagerOptions {
  backend: SandboxBackend;
  /** Answers a worker's own requests (its plugin's secrets); without it they are refused. */
  onWorkerRequest?: WorkerRequestHandler;
  logger: Logger;
  nodePath?: string;
  idleMs?: number;
  killGraceMs?: number;
  /** How long a cancelled call may stay unanswered before the worker counts as hung. */
  cancelGraceMs?: number;
  maxWorkersPerPlugin?: number;
  maxLineChars?: number;
  /**
   * The host's environment. Workers get only its allow-listed part (PATH, locale, time zone:
   * see `process/env.ts`) plus their own HOME and FENGYU_PLUGIN_* variables; never API keys,
   * the host token or anything else.
   */
  env?: Readonly<Record<string, string | undefined>>;
  /** The host's process registry (workers die with the host and are stopped with it). */
  groups?: ProcessGroups;
  /** Crash tests (docs/reliability.md): `plugin-call`. */
  crashPoint?: CrashPoint;
}

export class WorkerManager {
  private readonly workers = new Map<string, WorkerProcess>();
  private readonly sweeper: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly options: WorkerManagerOptions) {
    const idleMs = options.idleMs ?? 5 * 60_000;
    this.sweeper = setInterval(() => this.sweep(idleMs), Math.min(30_000, Math.max(50, idleMs / 2)));
    this.sweeper.unref();
  }

  get size(): number {
    return this.workers.size;
  }

  async invoke(req: InvokeRequest): Promise<unknown> {
    if (this.options.backend.unavailable) throw new FengYuError('sandbox_unavailable', { backend: 'bwrap', reason: this.options.backend.unavailable });
    if (this.closed) throw new FengYuError('tool_failed', { name: req.toolName, reason: 'the host is shutting down' });
    const { abort, signal } = req;
    if (abort ? abort.aborted : signal?.aborted) throw new FengYuError('tool_cancelled', { name: req.toolName });
    const worker = this.workerFor(req);
    let timedOut = false;
    let id: number | undefined;
    const cancel = () => {
      if (id !== undefined) worker.rpc.cancel(id);
    };
    // the timeouts of all calls share one timer; a call's deadline is dropped when it settles
    const deadline = callDeadlines.add(req.timeoutSeconds * 1000, () => {
      timedOut = true;
      cancel();
    });
    const detach = abort ? abort.onAbort(cancel) : undefined;
    if (!abort) signal?.addEventListener('abort', cancel); // no {once}: it costs 4× more, and finally removes it
    try {
      return await worker.call(req.method, req.params, { onProgress: req.onProgress, onDispatch: (n) => (id = n) });
    } catch (e) {
      if (!(e instanceof RpcCallError)) throw e;
      if (e.failure.kind === 'cancelled') {
        if (id !== undefined) this.watchCancelled(worker, id, timedOut);
        if (timedOut) throw new FengYuError('tool_timeout', { name: req.toolName, seconds: req.timeoutSeconds });
        throw new FengYuError('tool_cancelled', { name: req.toolName });
      }
      throw new FengYuError('tool_failed', { name: req.toolName, reason: e.failure.message }, e.failure.data === undefined ? undefined : { data: e.failure.data });
    } finally {
      callDeadlines.remove(deadline);
      if (detach) detach();
      else signal?.removeEventListener('abort', cancel);
      worker.touch();
    }
  }

  /** Stops every worker of a plugin (disable, upgrade, uninstall). */
  async stopPlugin(pluginId: string): Promise<void> {
    const stops: Array<Promise<void>> = [];
    for (const [key, w] of this.workers) {
      if (!key.startsWith(`${pluginId}@`)) continue;
      this.workers.delete(key);
      stops.push(w.stop(this.options.killGraceMs));
    }
    await Promise.all(stops);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.sweeper);
    const all = [...this.workers.values()];
    this.workers.clear();
    await Promise.all(all.map((w) => w.stop(this.options.killGraceMs)));
  }

  private workerFor(req: InvokeRequest): WorkerProcess {
    const { target } = req;
    const prefix = `${target.pluginId}@`;
    const owner = target.owner ?? DEFAULT_OWNER;
    const key = `${prefix}${target.version}${target.network ? '+net' : ''}\n${owner}\n${grantKey(this.options.backend, req.grants)}`;
    const existing = this.workers.get(key);
    if (existing?.alive) return existing;
    if (existing) void existing.stop(this.options.killGraceMs);
    this.evictFor(prefix);
    const launch = { nodePath: this.options.nodePath ?? process.execPath, worker: target.worker, root: target.root, dataDir: target.dataDir, grants: req.grants, network: target.network };
    const logger = this.options.logger.child({ plugin: target.pluginId, version: target.version, ...(owner === DEFAULT_OWNER ? {} : { owner }) });
    const worker = new WorkerProcess({
      spawn: workerCommand(this.options.backend, launch),
      cwd: target.root,
      env: allowListedEnv(this.options.env ?? {}, { HOME: target.dataDir, FENGYU_PLUGIN_ROOT: target.root, FENGYU_PLUGIN_DATA: target.dataDir }),
      logger,
      groups: this.options.groups,
      diesWithParent: Boolean(this.options.backend.bwrapPath),
      killGraceMs: this.options.killGraceMs,
      maxLineChars: this.options.maxLineChars,
      ...(this.options.crashPoint ? { onRequestWritten: () => this.options.crashPoint?.('plugin-call') } : {}),
      ...(this.options.onWorkerRequest ? { onRequest: (method: string, params: unknown) => this.options.onWorkerRequest!(target.pluginId, owner, method, params) } : {}),
      onExit: (reason) => {
        if (this.workers.get(key) === worker) this.workers.delete(key);
        logger.info({ reason }, 'plugin worker stopped');
      },
    });
    this.workers.set(key, worker);
    return worker;
  }

  /** Keeps at most `maxWorkersPerPlugin` workers of one plugin: stops the least recently used idle one. */
  private evictFor(prefix: string): void {
    const max = this.options.maxWorkersPerPlugin ?? 4;
    const mine = [...this.workers.entries()].filter(([k]) => k.startsWith(prefix));
    if (mine.length < max) return;
    const idle = mine.filter(([, w]) => w.rpc.inflight === 0).sort((a, b) => a[1].lastUsed - b[1].lastUsed)[0];
    if (!idle) return;
    this.workers.delete(idle[0]);
    void idle[1].stop(this.options.killGraceMs);
  }

  /**
   * After a cancellation: a worker that leaves the call unanswered past the grace is hung and is
   * killed. After a timeout the worker is detached at once (the next call gets a fresh one) and
   * stopped once its other calls drain.
   */
  private watchCancelled(worker: WorkerProcess, id: number, detach: boolean): void {
    if (detach) this.detach(worker);
    const check = () => {
      if (!worker.alive) return;
      if (worker.rpc.isAbandoned(id)) {
        this.options.logger.warn({ requestId: id }, 'plugin worker ignored a cancellation; killing it');
        this.detach(worker);
        void worker.stop(this.options.killGraceMs);
      } else if (detach && worker.rpc.inflight > 0) {
        setTimeout(check, this.options.cancelGraceMs ?? 2000).unref();
      } else if (detach) void worker.stop(this.options.killGraceMs);
    };
    setTimeout(check, this.options.cancelGraceMs ?? 2000).unref();
  }

  private detach(worker: WorkerProcess): void {
    for (const [k, w] of this.workers) if (w === worker) this.workers.delete(k);
  }

  private sweep(idleMs: number): void {
    const now = Date.now();
    for (const [key, w] of this.workers) {
      if (w.rpc.inflight === 0 && now - w.lastUsed > idleMs) {
        this.workers.delete(key);
        void w.stop(this.options.killGraceMs);
      }
    }
  }
}
