import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { EventSource } from 'eventsource';

/**
 * The host as a user starts it: `node bin/fengyu.mjs serve` (what `npm start` runs after its
 * build step) in its own process, on a temporary FENGYU_HOME, with the bundled plugins and the
 * sandbox it detects. The benchmark talks to it over HTTP and SSE on loopback only.
 */

export const ROOT = join(import.meta.dirname, '..');

export interface RealHost {
  url: string;
  token: string;
  pid: number;
  /** spawn → first `GET /api/health` answered 200, ms */
  startMs: number;
  proc: ChildProcess;
  stop(): Promise<void>;
}

export async function startRealHost(home: string, env: Record<string, string> = {}): Promise<RealHost> {
  const t0 = performance.now();
  const proc = spawn(process.execPath, [join(ROOT, 'bin/fengyu.mjs'), 'serve', '--port', '0', '--home', home], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let out = '';
  let err = '';
  proc.stderr?.on('data', (d) => {
    err += d;
  });
  const info = await new Promise<{ url: string; token: string }>((resolve, reject) => {
    proc.stdout?.on('data', (d) => {
      out += d;
      const u = out.match(/running at (\S+)/);
      const t = out.match(/#token=(\S+)/);
      if (u && t) resolve({ url: u[1] as string, token: t[1] as string });
    });
    proc.on('exit', (code) => reject(new Error(`host exited (${code}) before listening: ${err.slice(-2000)}`)));
  });
  for (;;) {
    const r = await fetch(`${info.url}/api/health`, { headers: { 'x-fengyu-token': info.token } }).catch(() => undefined);
    if (r?.ok) break;
    if (r && r.status !== 503) throw new Error(`health answered ${r.status}`);
  }
  const startMs = performance.now() - t0;
  return {
    ...info,
    pid: proc.pid as number,
    startMs,
    proc,
    stop: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null) return resolve();
        proc.once('exit', () => resolve());
        proc.kill('SIGTERM');
      }),
  };
}

/** Resident set size (MB) of a process, from /proc. */
export function rssMb(pid: number): number {
  try {
    const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/VmRSS:\s+(\d+) kB/);
    return m ? Number(m[1]) / 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}

/** Every descendant pid of `pid` (from /proc/<n>/stat's parent field). */
export function descendants(pid: number): number[] {
  const parent = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      parent.set(Number(d), Number(fields[1]));
    } catch {
      // the process ended while listing
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [c, pp] of parent) if (pp === p) out.push(c), walk(c);
  };
  walk(pid);
  return out;
}

export function loadAverage(): string {
  try {
    return execFileSync('uptime', { encoding: 'utf8' }).trim();
  } catch {
    return readFileSync('/proc/loadavg', 'utf8').trim();
  }
}

export class Client {
  readonly agent = new Agent({ keepAlive: true, maxSockets: 64 });
  constructor(
    readonly url: string,
    readonly token: string,
  ) {}

  /** One request over a kept-alive loopback connection; resolves with status and parsed body. */
  call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
    const u = new URL(path, this.url);
    const data = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    return new Promise((resolve, reject) => {
      const req = request(
        {
          agent: this.agent,
          host: u.hostname,
          port: u.port,
          path: u.pathname + u.search,
          method,
          headers: { 'x-fengyu-token': this.token, ...(data !== undefined ? { 'content-type': 'application/json', 'content-length': Buffer.byteLength(data) } : {}), ...headers },
        },
        (res) => {
          let text = '';
          res.setEncoding('utf8');
          res.on('data', (c) => {
            text += c;
          });
          res.on('end', () => {
            let parsed: unknown = text;
            // an answer that is not JSON (an SSE stream) is kept as its text, never parsed
            if (!String(res.headers['content-type'] ?? '').startsWith('text/event-stream')) {
              try {
                parsed = text ? JSON.parse(text) : undefined;
              } catch {
                // not JSON
              }
            }
            resolve({ status: res.statusCode ?? 0, body: parsed });
          });
        },
      );
      req.on('error', reject);
      req.end(data);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

export interface RunTiming {
  /** POST sent → `complete` received */
  totalMs: number;
  /** client receive time (performance.now) and server ts (epoch ms) of each step_complete */
  stepRecv: number[];
  stepTs: number[];
  /** client time (performance.now) the POST was sent and the `complete` frame received */
  sentAt: number;
  endAt: number;
}

/** POST /api/agent/run with a supplied workflow (full access, plan approval off unless asked): its run id. */
async function startRun(c: Client, workflow: unknown, maxConcurrency: number, planApproval = false): Promise<string> {
  const res = await c.call('POST', '/api/agent/run', { workflow, config: { planApproval, permissionMode: 'full-access', maxConcurrency } });
  if (res.status !== 200) throw new Error(`run refused: ${res.status} ${JSON.stringify(res.body)}`);
  return (res.body as { runId: string }).runId;
}

/** POST /api/agent/run with a supplied workflow, then watch its SSE stream until `complete`. */
export async function runWorkflow(c: Client, workflow: unknown, maxConcurrency = 8): Promise<RunTiming> {
  const t0 = performance.now();
  const runId = await startRun(c, workflow, maxConcurrency);
  const stepRecv: number[] = [];
  const stepTs: number[] = [];
  return new Promise((resolve, reject) => {
    const es = new EventSource(`${c.url}/api/agent/stream?runId=${runId}&token=${c.token}`);
    es.addEventListener('step_complete', (m: MessageEvent) => {
      stepRecv.push(performance.now());
      const e = JSON.parse(m.data) as { ts: string; status: string; error?: string };
      stepTs.push(Date.parse(e.ts));
      if (e.status !== 'done') {
        es.close();
        reject(new Error(`step failed: ${e.error}`));
      }
    });
    es.addEventListener('complete', () => {
      es.close();
      const endAt = performance.now();
      resolve({ totalMs: endAt - t0, stepRecv, stepTs, sentAt: t0, endAt });
    });
    es.addEventListener('error', (m: MessageEvent) => {
      if (m.data) {
        es.close();
        reject(new Error(String(m.data)));
      }
    });
  });
}

/**
 * A run watched from before its first step, as a person watches a run in the UI with plan approval
 * on (the default): POST with `planApproval: true`, subscribe to the stream, approve once the gate
 * is announced, then time the steps as `runWorkflow` does. `approvedAt` is when the approval was sent.
 */
export async function runWatched(c: Client, workflow: unknown, maxConcurrency = 8): Promise<RunTiming & { approvedAt: number }> {
  const t0 = performance.now();
  const runId = await startRun(c, workflow, maxConcurrency, true);
  const stepRecv: number[] = [];
  const stepTs: number[] = [];
  let approvedAt = Number.NaN;
  return new Promise((resolve, reject) => {
    const es = new EventSource(`${c.url}/api/agent/stream?runId=${runId}&token=${c.token}`);
    const fail = (e: Error) => {
      es.close();
      reject(e);
    };
    es.addEventListener('plan_approval_requested', () => {
      approvedAt = performance.now();
      c.call('POST', `/api/agent/${runId}/approve`, {}).then((r) => {
        if (r.status !== 200) fail(new Error(`approve answered ${r.status}: ${JSON.stringify(r.body)}`));
      }, fail);
    });
    es.addEventListener('step_complete', (m: MessageEvent) => {
      stepRecv.push(performance.now());
      const e = JSON.parse(m.data) as { ts: string; status: string; error?: string };
      stepTs.push(Date.parse(e.ts));
      if (e.status !== 'done') fail(new Error(`step failed: ${e.error}`));
    });
    es.addEventListener('complete', () => {
      es.close();
      const endAt = performance.now();
      resolve({ totalMs: endAt - t0, stepRecv, stepTs, approvedAt, sentAt: t0, endAt });
    });
    es.addEventListener('error', (m: MessageEvent) => {
      if (m.data) fail(new Error(String(m.data)));
    });
  });
}

/**
 * POST a run, then read its SSE stream to its end over the client's kept-alive connections (the
 * host ends a run's stream after its terminal event): the same requests as `runWorkflow`, without
 * an EventSource object per run, so the client's own CPU per run is close to the floor client's.
 */
export async function runToEnd(c: Client, workflow: unknown, maxConcurrency = 8): Promise<number> {
  const t0 = performance.now();
  const runId = await startRun(c, workflow, maxConcurrency);
  const stream = await c.call('GET', `/api/agent/stream?runId=${runId}`, undefined, { accept: 'text/event-stream' });
  const text = String(stream.body);
  if (stream.status !== 200 || !text.includes('\nevent: complete\n')) throw new Error(`run did not complete: ${stream.status} ${text.slice(-300)}`);
  return performance.now() - t0;
}

/**
 * The share of a run's step time the client saw live: the span between the first and last
 * step_complete as received, over the same span as committed (server timestamps). A run whose
 * events all arrive in one burst after it ended scores ≈ 0; a fully live stream ≈ 1.
 */
export function liveFraction(t: RunTiming): number {
  const n = t.stepTs.length;
  if (n < 2) return Number.NaN;
  const server = (t.stepTs[n - 1] as number) - (t.stepTs[0] as number);
  const client = (t.stepRecv[n - 1] as number) - (t.stepRecv[0] as number);
  if (server <= 0) return Number.NaN;
  return Math.max(0, Math.min(1, client / server));
}

/**
 * When the first step's end reached the client, as a share of the run's time at the client: from
 * `from` (the approval that lets the first step start, or the POST) to the `complete` frame. A
 * stream that publishes each step's end once committed shows the first of 40 near 1/40; one that
 * sends the run's frames in one burst at its end, near 1.
 */
export function firstFrameShare(t: RunTiming, from: number): number {
  const first = t.stepRecv[0];
  if (first === undefined || !(t.endAt > from)) return Number.NaN;
  return Math.max(0, Math.min(1, (first - from) / (t.endAt - from)));
}

export const chainOf = (tool: string, n: number) => ({ steps: Array.from({ length: n }, (_, i) => ({ id: `s${i}`, tool, ...(i ? { dependsOn: [`s${i - 1}`] } : {}) })) });

export const dagOf = (tool: string, levels: number, width: number) => ({
  steps: Array.from({ length: levels * width }, (_, i) => {
    const level = Math.floor(i / width);
    return { id: `l${level}n${i % width}`, tool, ...(level ? { dependsOn: Array.from({ length: width }, (_, j) => `l${level - 1}n${j}`) } : {}) };
  }),
});
