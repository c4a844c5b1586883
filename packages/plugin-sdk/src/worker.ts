import { z } from 'zod';
import {
  CANCEL_METHOD,
  DESCRIBE_FLAG,
  DESCRIBE_METHOD,
  type Description,
  LOG_METHOD,
  PROGRESS_METHOD,
  RpcErrorCode,
  type RpcError,
  type RpcRequest,
  SECRETS_GET_METHOD,
  SECRETS_SET_METHOD,
} from './wire';
import { directWriter } from './stdout';

/**
 * The worker runtime: register typed methods, then `start()` to serve newline-delimited
 * JSON-RPC 2.0 on stdin/stdout. Input is parsed with the method's zod schema before the
 * handler runs; the handler's return value is checked against the output schema.
 */

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

export interface Progress {
  message?: string;
  current?: number;
  total?: number;
}

export interface MethodContext {
  /** Aborted when the host cancels the call (timeout, run cancelled) or shuts the worker down. */
  signal: AbortSignal;
  log: (level: LogLevel, message: string) => void;
  progress: (progress: Progress) => void;
  /** The plugin's install directory (read-only). */
  pluginRoot: string;
  /** The plugin's private, writable data directory (kept across upgrades). */
  dataDir: string;
  /** JSON-RPC id of the call. */
  requestId: number | string;
  /** The plugin's own secrets, kept encrypted in the host's vault (never in the data directory). */
  secrets: PluginSecrets;
}

/** A plugin's values in the host's vault, by key (see `PLUGIN_SECRET_KEY_RE`). */
export interface PluginSecrets {
  get(key: string): Promise<string | undefined>;
  /** Stores a value, or removes it with `null`. */
  set(key: string, value: string | null): Promise<void>;
}

export interface MethodSpec<I extends z.ZodType, O extends z.ZodType> {
  description: string;
  input: I;
  output: O;
}

export type Handler<I extends z.ZodType, O extends z.ZodType> = (
  input: z.output<I>,
  ctx: MethodContext,
) => Promise<z.input<O>> | z.input<O>;

interface Registered {
  spec: MethodSpec<z.ZodType, z.ZodType>;
  handler: Handler<z.ZodType, z.ZodType>;
}

/** Thrown by a handler to fail a call with a chosen message and optional data. */
export class ToolError extends Error {
  constructor(
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
    this.name = 'ToolError';
  }
}

export interface WorkerIo {
  input: NodeJS.ReadableStream;
  write: (line: string) => void;
  env: Readonly<Record<string, string | undefined>>;
  argv: readonly string[];
  exit: (code: number) => void;
}

const SETTLED = Promise.resolve();

export class Worker {
  private readonly methods = new Map<string, Registered>();
  private readonly inflight = new Map<number | string, CallState>();
  /** Requests this worker sent the host, by their (string) id. */
  private readonly asked = new Map<string, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  private nextAsk = 1;
  private io?: WorkerIo;
  /** The vault access every call's context shares. */
  private readonly secrets: PluginSecrets = {
    get: async (key) => {
      const r = (await this.ask(SECRETS_GET_METHOD, { key })) as { value?: unknown } | null;
      return typeof r?.value === 'string' ? r.value : undefined;
    },
    set: async (key, value) => {
      await this.ask(SECRETS_SET_METHOD, { key, value });
    },
  };
  private dirs = { pluginRoot: '', dataDir: '' };

  /** Registers a method. Types of `input` and the return value are inferred from the schemas. */
  method<I extends z.ZodType, O extends z.ZodType>(name: string, spec: MethodSpec<I, O>, handler: Handler<I, O>): this {
    if (this.methods.has(name)) throw new Error(`method ${name} registered twice`);
    if (name.startsWith('$/')) throw new Error(`method names starting with $/ are reserved: ${name}`);
    this.methods.set(name, { spec, handler: handler as Handler<z.ZodType, z.ZodType> });
    return this;
  }

  /** The `rpc.methods` block of the manifest, generated from the registered schemas. */
  describe(): Description {
    const methods: Description['methods'] = {};
    for (const [name, { spec }] of this.methods) {
      methods[name] = {
        description: spec.description,
        inputSchema: jsonSchemaOf(spec.input, 'input'),
        outputSchema: jsonSchemaOf(spec.output, 'output'),
      };
    }
    return { methods };
  }

  /** Serves JSON-RPC on stdio (or the given streams) until stdin ends. */
  start(io: Partial<WorkerIo> = {}): void {
    const full: WorkerIo = {
      input: io.input ?? process.stdin,
      write: io.write ?? directWriter(process.stdout, 1),
      env: io.env ?? process.env,
      argv: io.argv ?? process.argv,
      exit: io.exit ?? ((code) => process.exit(code)),
    };
    this.io = full;
    // Read once: process.env lookups are slow, and these do not change.
    this.dirs = { pluginRoot: full.env.FENGYU_PLUGIN_ROOT ?? process.cwd(), dataDir: full.env.FENGYU_PLUGIN_DATA ?? process.cwd() };
    if (full.argv.includes(DESCRIBE_FLAG)) {
      full.write(`${JSON.stringify(this.describe())}\n`);
      full.exit(0);
      return;
    }
    let buffer = '';
    full.input.setEncoding?.('utf8');
    full.input.on('data', (chunk: string | Buffer) => {
      const text = typeof chunk === 'string' ? chunk : chunk.toString('utf8');
      let start = 0;
      let nl = text.indexOf('\n');
      if (nl < 0) {
        buffer += text;
        return;
      }
      while (nl >= 0) {
        const line = buffer ? buffer + text.slice(start, nl) : text.slice(start, nl);
        buffer = '';
        if (line.trim()) this.onLine(line);
        start = nl + 1;
        nl = text.indexOf('\n', start);
      }
      buffer = text.slice(start);
      // the answers of synchronous handlers leave now, in one write, before the stream's own
      // bookkeeping and the promise jobs (the flush queued for them then finds nothing)
      if (this.outbox.length > 0) this.flush();
    });
    full.input.on('end', () => {
      for (const c of this.inflight.values()) c.abort();
      for (const w of this.asked.values()) w.reject(new Error('the host closed the connection'));
      this.asked.clear();
      full.exit(0);
    });
  }

  private outbox: string[] = [];

  /** Queues one message; everything queued in the same tick is written with one syscall. */
  private send(message: Record<string, unknown>): void {
    this.queue(JSON.stringify({ jsonrpc: '2.0', ...message }));
  }

  /** The first line queued schedules the write as a promise job (a reaction on a settled promise: `queueMicrotask` would also make an AsyncResource and a bound function). */
  private queue(line: string): void {
    this.outbox.push(line);
    if (this.outbox.length === 1) SETTLED.then(this.flush);
  }

  private readonly flush = (): void => {
    const lines = this.outbox;
    this.outbox = [];
    if (lines.length > 0) this.io?.write(`${lines.join('\n')}\n`);
  };

  /** A call's result, its line made with one `JSON.stringify` of the result (the same bytes as `send`). */
  private answer(id: number | string, result: unknown): void {
    const json = JSON.stringify(result);
    if (json === undefined) return this.send({ id, result });
    // an integer id is written as `String` writes it, the same text as `JSON.stringify`
    this.queue(`{"jsonrpc":"2.0","id":${Number.isSafeInteger(id) ? String(id) : JSON.stringify(id)},"result":${json}}`);
  }

  /** Sends the host a request of the worker's own and waits for its answer. */
  private ask(method: string, params: unknown): Promise<unknown> {
    const id = `w${this.nextAsk++}`;
    return new Promise((resolve, reject) => {
      this.asked.set(id, { resolve, reject });
      this.send({ id, method, params });
    });
  }

  /** An answer to one of the worker's own requests (true when the line was one). */
  private onAnswer(msg: { id?: unknown; result?: unknown; error?: { message?: unknown } }): boolean {
    if (typeof msg.id !== 'string') return false;
    const waiting = this.asked.get(msg.id);
    if (!waiting) return false;
    this.asked.delete(msg.id);
    if (msg.error) waiting.reject(new Error(typeof msg.error.message === 'string' ? msg.error.message : 'the host refused the request'));
    else waiting.resolve(msg.result);
    return true;
  }

  private fail(id: RpcRequest['id'], error: RpcError): void {
    this.send({ id: id ?? null, error });
  }

  private onLine(line: string): void {
    let msg: RpcRequest;
    try {
      msg = JSON.parse(line) as RpcRequest;
    } catch {
      this.fail(null, { code: RpcErrorCode.parseError, message: 'invalid JSON' });
      return;
    }
    if (msg && typeof msg === 'object' && msg.method === undefined && this.onAnswer(msg as never)) return;
    if (!msg || typeof msg !== 'object' || typeof msg.method !== 'string') {
      this.fail(msg?.id, { code: RpcErrorCode.invalidRequest, message: 'not a JSON-RPC request' });
      return;
    }
    if (msg.method === CANCEL_METHOD) {
      const id = (msg.params as { id?: number | string } | undefined)?.id;
      if (id !== undefined) this.inflight.get(id)?.abort();
      return;
    }
    if (msg.id === undefined || msg.id === null) return; // other notifications are ignored
    if (msg.method === DESCRIBE_METHOD) {
      this.send({ id: msg.id, result: this.describe() });
      return;
    }
    this.call(msg.id, msg.method, msg.params);
  }

  private call(id: number | string, name: string, params: unknown): void {
    const registered = this.methods.get(name);
    if (!registered) {
      this.fail(id, { code: RpcErrorCode.methodNotFound, message: `unknown method ${name}` });
      return;
    }
    const parsed = registered.spec.input.safeParse(params ?? {});
    if (!parsed.success) {
      this.fail(id, { code: RpcErrorCode.invalidParams, message: z.prettifyError(parsed.error), data: parsed.error.issues });
      return;
    }
    const state = new CallState(id, this.dirs, (m) => this.send(m), this.secrets);
    this.inflight.set(id, state);
    let output: unknown;
    try {
      output = registered.handler(parsed.data, state);
    } catch (e) {
      this.finishWithError(state, e);
      return;
    }
    // Synchronous handlers answer without a promise round trip.
    if (output && typeof (output as PromiseLike<unknown>).then === 'function') {
      (output as PromiseLike<unknown>).then(
        (value) => this.finish(state, name, registered.spec.output, value),
        (e) => this.finishWithError(state, e),
      );
    } else this.finish(state, name, registered.spec.output, output);
  }

  private finish(state: CallState, name: string, schema: z.ZodType, output: unknown): void {
    this.inflight.delete(state.requestId);
    if (state.cancelled) return this.fail(state.requestId, { code: RpcErrorCode.cancelled, message: 'cancelled' });
    const checked = schema.safeParse(output);
    if (!checked.success) {
      return this.fail(state.requestId, { code: RpcErrorCode.internalError, message: `output of ${name} does not match its schema: ${z.prettifyError(checked.error)}` });
    }
    this.answer(state.requestId, checked.data);
  }

  private finishWithError(state: CallState, e: unknown): void {
    this.inflight.delete(state.requestId);
    const code = state.cancelled ? RpcErrorCode.cancelled : RpcErrorCode.toolFailed;
    const data = e instanceof ToolError ? e.data : undefined;
    this.fail(state.requestId, { code, message: e instanceof Error ? e.message : String(e), ...(data === undefined ? {} : { data }) });
  }
}

/** One call's context. The AbortController is created only if the handler looks at `signal`. */
class CallState implements MethodContext {
  private controller?: AbortController;
  cancelled = false;
  readonly pluginRoot: string;
  readonly dataDir: string;
  readonly log: MethodContext['log'];
  readonly progress: MethodContext['progress'];

  constructor(
    readonly requestId: number | string,
    dirs: { pluginRoot: string; dataDir: string },
    send: (message: Record<string, unknown>) => void,
    readonly secrets: PluginSecrets,
  ) {
    this.pluginRoot = dirs.pluginRoot;
    this.dataDir = dirs.dataDir;
    this.log = (level, message) => send({ method: LOG_METHOD, params: { level, message } });
    this.progress = (p) => send({ method: PROGRESS_METHOD, params: { id: requestId, ...p } });
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.cancelled) this.controller.abort();
    }
    return this.controller.signal;
  }

  abort(): void {
    this.cancelled = true;
    this.controller?.abort();
  }
}

function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output'): Record<string, unknown> {
  const json = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  return json;
}

/** Creates a worker. Chain `.method(...)` calls, then `.start()`. */
export function createWorker(): Worker {
  return new Worker();
}
