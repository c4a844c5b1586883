import { FengYuError, isFengYuError, localize, type McpConnectionState } from '@fengyu/protocol';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import type { Logger } from 'pino';
import { createPolicyFetch } from '../net/policy-fetch';
import { DEFAULT_CALL_TIMEOUT_SECONDS, isStdio, type McpServerConfig, type StdioServerConfig, transportOf } from './mcp.config';
import type { ProgressFn } from '../tools/tool';
import { type McpCallResult, type McpToolDef, mapCallResult, TOOL_NAME } from './mcp-tool';

/**
 * One connection to one configured MCP server, opened lazily with the official SDK client
 * (stdio or streamable HTTP). Keeps the server's tool list current (`tools/list_changed`),
 * reports its state, and never throws out of `ensure()`'s callers' way: a server that fails
 * to start goes to `error` and is retried only after a back-off or a settings change.
 */

export interface ConnectionDeps {
  logger: Logger;
  now: () => number;
  /** How long connect + initialize + the first tools/list may take. */
  connectTimeoutMs?: number;
  /** Wait after a failed start before `ensure()` tries again. */
  retryAfterMs?: number;
  clientVersion?: string;
  /**
   * How a stdio server is started (the owner's sandbox, see `mcp-launch.ts`); may throw to
   * refuse it. Without it the configured command runs as it is.
   */
  launchStdio?: (config: StdioServerConfig) => Promise<StdioLaunch>;
}

/** The program a stdio server runs as: the configured one, or the same wrapped in a sandbox. */
export interface StdioLaunch {
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
}

export interface ConnectionSnapshot {
  name: string;
  transport: 'stdio' | 'http';
  state: McpConnectionState;
  error?: string;
  tools: McpToolDef[];
}

const STDERR_LINES = 20;
/** Bounds on what one (possibly hostile) server can put into the catalog. */
const MAX_TOOLS = 512;
const MAX_DESCRIPTION = 4000;

/** The MCP SDK client, loaded with the first connection: a host with no MCP server in use reads none of it. */
async function loadSdk() {
  const [{ Client }, { StdioClientTransport }, { StreamableHTTPClientTransport }, { ErrorCode, McpError }] = await Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/types.js'),
  ]);
  /** Remembers the child's pid: the SDK forgets it as soon as it starts closing. */
  class TrackedStdioTransport extends StdioClientTransport {
    childPid?: number;
    override async start(): Promise<void> {
      await super.start();
      this.childPid = this.pid ?? undefined;
    }
  }
  return { Client, TrackedStdioTransport, StreamableHTTPClientTransport, ErrorCode, McpError };
}

type McpSdk = Awaited<ReturnType<typeof loadSdk>>;
let sdkLoading: Promise<McpSdk> | undefined;
/** Set once loaded: a connection that exists was made with it. */
let sdk: McpSdk | undefined;

async function mcpSdk(): Promise<McpSdk> {
  sdkLoading ??= loadSdk().then((loaded) => {
    sdk = loaded;
    return loaded;
  });
  return sdkLoading;
}

/** A server that failed to start gets no graceful shutdown: it is stopped at once. */
function stopChild(transport: Transport): void {
  const pid = sdk && transport instanceof sdk.TrackedStdioTransport ? transport.childPid : undefined;
  if (!pid) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    // already gone
  }
}

export class McpConnection {
  state: McpConnectionState = 'idle';
  error?: string;
  tools: McpToolDef[] = [];
  private client?: Client;
  private transport?: Transport;
  private pending?: Promise<void>;
  private failedAt = 0;
  private generation = 0;
  /** Calls begun and not yet answered: a retired connection closes when the last one ends. */
  private inFlight = 0;
  private retiring = false;
  private retired?: () => void;
  private readonly stderrTail: string[] = [];
  private readonly log: Logger;

  constructor(
    readonly server: string,
    readonly config: McpServerConfig,
    private readonly deps: ConnectionDeps,
  ) {
    this.log = deps.logger.child({ component: 'mcp', server });
  }

  get timeoutSeconds(): number {
    return this.config.timeoutSeconds ?? DEFAULT_CALL_TIMEOUT_SECONDS;
  }

  snapshot(): ConnectionSnapshot {
    return { name: this.server, transport: transportOf(this.config), state: this.state, ...(this.error ? { error: this.error } : {}), tools: this.tools };
  }

  /** Connects if needed; resolves when ready, rejects with `mcp_server_unavailable` otherwise. */
  ensure(): Promise<void> {
    if (this.state === 'ready') return Promise.resolve();
    if (this.pending) return this.pending;
    if (this.state === 'error' && this.deps.now() - this.failedAt < (this.deps.retryAfterMs ?? 30_000)) {
      return Promise.reject(this.unavailable(this.error ?? 'failed to start'));
    }
    this.pending = this.connect().finally(() => {
      this.pending = undefined;
    });
    return this.pending;
  }

  /** Forgets a failure so the next `ensure()` tries at once (explicit reconnect). */
  resetBackoff(): void {
    this.failedAt = 0;
  }

  private unavailable(reason: string): FengYuError {
    return new FengYuError('mcp_server_unavailable', { server: this.server, reason });
  }

  private async makeTransport({ TrackedStdioTransport, StreamableHTTPClientTransport }: McpSdk): Promise<Transport> {
    if (isStdio(this.config)) {
      const c = this.config;
      const launch = this.deps.launchStdio ? await this.deps.launchStdio(c) : { command: c.command, args: c.args, env: c.env };
      const t = new TrackedStdioTransport({ ...launch, stderr: 'pipe' });
      t.stderr?.on('data', (chunk: Buffer) => this.onStderr(chunk));
      return t;
    }
    // The same address policy as web_fetch: loopback and private servers need the explicit opt-in.
    const fetch = createPolicyFetch({ allowPrivateNetwork: this.config.allowPrivateNetwork === true });
    return new StreamableHTTPClientTransport(new URL(this.config.url), { requestInit: { headers: this.config.headers }, fetch });
  }

  private onStderr(chunk: Buffer): void {
    for (const line of chunk.toString('utf8').split('\n')) {
      if (!line.trim()) continue;
      this.stderrTail.push(line.slice(0, 500));
      if (this.stderrTail.length > STDERR_LINES) this.stderrTail.shift();
      this.log.debug({ stderr: line.slice(0, 500) }, 'mcp server stderr');
    }
  }

  private async connect(): Promise<void> {
    const gen = ++this.generation;
    this.state = 'connecting';
    this.error = undefined;
    const loaded = await mcpSdk().catch((e: unknown) => {
      this.state = 'error';
      this.error = this.describe(e);
      this.failedAt = this.deps.now();
      throw this.unavailable(this.error);
    });
    const client = new loaded.Client(
      { name: 'fengyu', version: this.deps.clientVersion ?? '0.1.0' },
      { capabilities: {}, listChanged: { tools: { autoRefresh: false, debounceMs: 50, onChanged: () => void this.refreshTools(gen) } } },
    );
    const timeout = this.deps.connectTimeoutMs ?? 30_000;
    let transport: Transport | undefined;
    try {
      transport = await this.makeTransport(loaded);
      await client.connect(transport, { timeout });
      const tools = await this.listAll(client, timeout);
      if (gen !== this.generation) throw new Error('superseded');
      this.client = client;
      this.transport = transport;
      this.tools = tools;
      client.onclose = () => this.onClosed(gen);
      this.state = 'ready';
      this.log.info({ tools: this.tools.length }, 'mcp server connected');
    } catch (e) {
      if (transport) stopChild(transport);
      await client.close().catch(() => {});
      if (gen !== this.generation) throw this.unavailable('connection was replaced');
      const reason = this.describe(e);
      this.client = undefined;
      this.transport = undefined;
      this.state = 'error';
      this.error = reason;
      this.failedAt = this.deps.now();
      this.log.warn({ reason }, 'mcp server failed to start');
      throw this.unavailable(reason);
    }
  }

  private describe(e: unknown): string {
    if (isFengYuError(e)) return localize(e.code, e.params);
    const cause = e instanceof Error && e.cause instanceof Error ? `: ${e.cause.message}` : '';
    const msg = e instanceof Error ? `${e.message}${cause}` : String(e);
    const last = this.stderrTail[this.stderrTail.length - 1];
    return last ? `${msg} (stderr: ${last})` : msg;
  }

  private onClosed(gen: number): void {
    if (gen !== this.generation || this.state === 'closed') return;
    this.log.warn('mcp server connection closed; it reconnects on next use');
    this.client = undefined;
    this.transport = undefined;
    this.tools = [];
    this.state = 'idle';
  }

  private async listAll(client: Client, timeout: number): Promise<McpToolDef[]> {
    const out: McpToolDef[] = [];
    const seen = new Set<string>();
    let cursor: string | undefined;
    for (let page = 0; page < 100; page++) {
      const res = await client.listTools(cursor ? { cursor } : undefined, { timeout });
      for (const t of res.tools) {
        if (!TOOL_NAME.test(t.name) || seen.has(t.name) || out.length >= MAX_TOOLS) {
          this.log.warn({ tool: String(t.name).slice(0, 200) }, 'mcp tool skipped: name not allowed, duplicate, or too many tools');
          continue;
        }
        seen.add(t.name);
        const description = typeof t.description === 'string' ? t.description.slice(0, MAX_DESCRIPTION) : undefined;
        out.push({ ...(t as McpToolDef), ...(description !== undefined ? { description } : {}) });
      }
      cursor = res.nextCursor;
      if (!cursor) break;
    }
    return out;
  }

  private async refreshTools(gen: number): Promise<void> {
    const client = this.client;
    if (!client || gen !== this.generation) return;
    try {
      const tools = await this.listAll(client, this.deps.connectTimeoutMs ?? 30_000);
      if (gen === this.generation) this.tools = tools;
      this.log.info({ tools: tools.length }, 'mcp tool list refreshed');
    } catch (e) {
      this.log.warn({ reason: this.describe(e) }, 'mcp tool list refresh failed');
    }
  }

  /** Calls a tool; maps the result to JSON. Rejects with tool_failed / tool_timeout / tool_cancelled. */
  async call(tool: string, qualified: string, args: Record<string, unknown>, signal: AbortSignal, progress?: ProgressFn): Promise<unknown> {
    this.inFlight++;
    try {
      return await this.callOnce(tool, qualified, args, signal, progress);
    } finally {
      if (--this.inFlight === 0 && this.retiring) void this.close().finally(() => this.retired?.());
    }
  }

  private async callOnce(tool: string, qualified: string, args: Record<string, unknown>, signal: AbortSignal, progress?: ProgressFn): Promise<unknown> {
    if (signal.aborted) throw new FengYuError('tool_cancelled', { name: qualified });
    await this.ensure();
    const client = this.client;
    if (!client) throw this.unavailable('not connected');
    let result: McpCallResult;
    try {
      const onprogress = progress
        ? (p: { progress: number; total?: number; message?: string }) => progress({ current: p.progress, ...(p.total !== undefined ? { total: p.total } : {}), ...(p.message ? { message: p.message } : {}) })
        : undefined;
      result = (await client.callTool({ name: tool, arguments: args }, undefined, { signal, timeout: this.timeoutSeconds * 1000, onprogress })) as McpCallResult;
    } catch (e) {
      if (signal.aborted) throw new FengYuError('tool_cancelled', { name: qualified }, undefined, { cause: e });
      if (sdk && e instanceof sdk.McpError && e.code === sdk.ErrorCode.RequestTimeout) {
        throw new FengYuError('tool_timeout', { name: qualified, seconds: this.timeoutSeconds }, undefined, { cause: e });
      }
      if (isFengYuError(e)) throw e;
      throw new FengYuError('tool_failed', { name: qualified, reason: this.describe(e) }, undefined, { cause: e });
    }
    return mapCallResult(qualified, result);
  }

  /**
   * Closes once the calls in flight have their answers (a changed or removed server: the calls
   * already sent finish on the configuration they started with; new calls go to its replacement).
   * Resolves when closed.
   */
  retire(): Promise<void> {
    if (this.inFlight === 0) return this.close();
    this.retiring = true;
    return new Promise((resolve) => {
      this.retired = resolve;
    });
  }

  async close(): Promise<void> {
    this.generation++;
    this.state = 'closed';
    const client = this.client;
    const transport = this.transport;
    this.client = undefined;
    this.transport = undefined;
    this.tools = [];
    if (sdk && transport instanceof sdk.StreamableHTTPClientTransport) await transport.terminateSession().catch(() => {});
    await client?.close().catch(() => {});
  }
}
