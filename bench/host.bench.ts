import { execFileSync, fork, spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { chainOf, Client, dagOf, descendants, firstFrameShare, liveFraction, loadAverage, ROOT, type RealHost, type RunTiming, rssMb, runToEnd, runWatched, runWorkflow, startRealHost } from './real-host';
import { fmt, median, p99, quantile } from './stats';

/**
 * The host as `npm start` runs it (its own process, bundled plugins, the sandbox it detects,
 * HTTP + SSE over loopback), each figure next to a floor measured in the same run:
 * - a bare Node child echoing newline-delimited JSON over stdio, driven by a minimal line client;
 * - a bare Fastify route committing one SQLite row (WAL; synchronous NORMAL and FULL), in its own process;
 * - a bare Node HTTP server for the cold start.
 * Each `run` returns printable lines and the ratios `--quick` checks against bench/goals.json.
 */

export interface BenchResult {
  lines: string[];
  ratios: Record<string, number>;
}

const BUILTIN = 'task_capacity'; // a built-in read tool that answers from memory
const PLUGIN = 'email_accounts_list'; // a bundled plugin's read tool (a call to its worker process)

// ---------- floors ----------

function floorProcess(args: string[]): Promise<{ port: number; stop: () => void; startMs: number }> {
  const t0 = performance.now();
  const proc = spawn(process.execPath, [join(ROOT, 'bench/floor-server.mjs'), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    let out = '';
    proc.stdout?.on('data', (d) => {
      out += d;
      const m = out.match(/PORT (\d+)/);
      if (m) {
        const port = Number(m[1]);
        void (async () => {
          for (;;) if ((await fetch(`http://127.0.0.1:${port}/`).catch(() => undefined)) !== undefined) break;
          resolve({ port, startMs: performance.now() - t0, stop: () => proc.kill('SIGTERM') });
        })();
      }
    });
    proc.on('error', reject);
  });
}

/** Sequential round trips to the bare echo child (µs). */
async function echoFloor(calls: number): Promise<number[]> {
  const proc = spawn(process.execPath, [join(ROOT, 'bench/floor-server.mjs'), 'echo'], { stdio: ['pipe', 'pipe', 'inherit'] });
  proc.stdout?.setEncoding('utf8');
  let buf = '';
  let waiting: (() => void) | undefined;
  proc.stdout?.on('data', (c: string) => {
    buf += c;
    if (buf.includes('\n')) {
      buf = buf.slice(buf.lastIndexOf('\n') + 1);
      waiting?.();
    }
  });
  const times: number[] = [];
  for (let i = 0; i < calls + 500; i++) {
    const t = performance.now();
    await new Promise<void>((r) => {
      waiting = r;
      proc.stdin?.write(`${JSON.stringify({ jsonrpc: '2.0', id: i, method: 'noop', params: {} })}\n`);
    });
    if (i >= 500) times.push((performance.now() - t) * 1000);
  }
  proc.kill();
  return times;
}

/** `total` requests from `clients` concurrent clients; requests/s and per-request latency (ms). */
async function load(clients: number, total: number, send: () => Promise<unknown>): Promise<{ perSecond: number; latencies: number[] }> {
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < total) {
        next++;
        const t = performance.now();
        await send();
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { perSecond: (total * 1000) / (performance.now() - t0), latencies };
}

async function sqliteFloor(sync: 'normal' | 'full', total: number) {
  const f = await floorProcess(['sqlite', sync]);
  const c = new Client(`http://127.0.0.1:${f.port}`, '');
  try {
    await load(8, 200, () => c.call('POST', '/floor', { n: 1 }));
    return await load(8, total, () => c.call('POST', '/floor', { n: 1 }));
  } finally {
    c.close();
    f.stop();
  }
}

// ---------- the real host ----------

/** `total` 1-step runs, 8 clients, each followed with an `EventSource` (after 16 not counted). */
async function runsPerSecond(c: Client, total: number) {
  const wf = chainOf(BUILTIN, 1);
  const one = () => runWorkflow(c, wf);
  await load(8, 16, one);
  return load(8, total, one);
}

/** Requests from `clients` concurrent clients for `ms` (each client starts no request after it). */
async function loadFor(clients: number, ms: number, send: () => Promise<unknown>): Promise<{ count: number; elapsedMs: number; latencies: number[] }> {
  const latencies: number[] = [];
  const t0 = performance.now();
  const until = t0 + ms;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) {
        const t = performance.now();
        await send();
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { count: latencies.length, elapsedMs: performance.now() - t0, latencies };
}

interface Paced {
  perSecond: number;
  latencies: number[];
  /** each measuring window's rate, in order */
  windows: number[];
  /** the rate of the warm-up's first second */
  firstSecond: number;
}

/**
 * 1-step runs/s (8 clients, plain-HTTP stream client) against the Fastify + 1 insert floor, both
 * treated alike: each warmed for `warmMs` (both rates climb for thousands of requests after a
 * start: the JIT's tiers, SQLite's page cache), then `windows` measuring windows of `windowMs`
 * each, alternated floor, host, floor, host… so that a change in the machine's load hits both.
 * The floor runs in its own process with the host idle, and the other way round.
 */
async function runsAgainstFloor(c: Client, sync: 'normal' | 'full', o: { warmMs: number; windowMs: number; windows: number }): Promise<{ host: Paced; floor: Paced }> {
  const f = await floorProcess(['sqlite', sync]);
  const fc = new Client(`http://127.0.0.1:${f.port}`, '');
  const wf = chainOf(BUILTIN, 1);
  const sides = {
    floor: () => fc.call('POST', '/floor', { n: 1 }),
    host: () => runToEnd(c, wf),
  };
  const out = {} as Record<'host' | 'floor', Paced>;
  try {
    for (const [k, send] of Object.entries(sides) as ['host' | 'floor', () => Promise<unknown>][]) {
      const first = await loadFor(8, 1000, send);
      if (o.warmMs > 1000) await loadFor(8, o.warmMs - 1000, send);
      out[k] = { perSecond: 0, latencies: [], windows: [], firstSecond: (first.count * 1000) / first.elapsedMs };
    }
    let count = { host: 0, floor: 0 };
    let elapsed = { host: 0, floor: 0 };
    for (let i = 0; i < o.windows; i++) {
      for (const [k, send] of Object.entries(sides) as ['host' | 'floor', () => Promise<unknown>][]) {
        const w = await loadFor(8, o.windowMs, send);
        out[k].windows.push((w.count * 1000) / w.elapsedMs);
        out[k].latencies.push(...w.latencies);
        count = { ...count, [k]: count[k] + w.count };
        elapsed = { ...elapsed, [k]: elapsed[k] + w.elapsedMs };
      }
    }
    for (const k of ['host', 'floor'] as const) out[k].perSecond = (count[k] * 1000) / elapsed[k];
    return out;
  } finally {
    fc.close();
    f.stop();
  }
}

/** Interleaved repetitions of several workflows (machine noise hits each alike). */
async function interleaved(c: Client, shapes: Record<string, unknown>, reps: number): Promise<Record<string, RunTiming[]>> {
  const out: Record<string, RunTiming[]> = Object.fromEntries(Object.keys(shapes).map((k) => [k, []]));
  for (const wf of Object.values(shapes)) await runWorkflow(c, wf); // warm-up (plugin worker started, JIT)
  for (let i = 0; i < reps; i++) for (const [k, wf] of Object.entries(shapes)) out[k]?.push(await runWorkflow(c, wf));
  return out;
}

/** `GET /api/health` latencies (ms), sequential probes, while `busy` runs. */
async function healthWhile(c: Client, busy: Promise<unknown> | undefined, probes: number): Promise<number[]> {
  const lat: number[] = [];
  let done = false;
  void busy?.finally(() => {
    done = true;
  });
  for (let i = 0; (busy ? !done : i < probes); i++) {
    const t = performance.now();
    const r = await c.call('GET', '/api/health');
    if (r.status !== 200) throw new Error(`health ${r.status}`);
    lat.push(performance.now() - t);
  }
  return lat;
}

/** A `GET /api/health` prober in its own process (bench/health-prober.mjs): booted and connected, probing from `start` until `stop`. */
async function startProber(host: RealHost): Promise<{ start(): void; stop(): Promise<number[]> }> {
  const child = fork(join(import.meta.dirname, 'health-prober.mjs'), [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const ready = once(child, 'message') as Promise<[{ ready: boolean; status: number }]>;
  child.send({ url: host.url, token: host.token });
  const [{ status }] = await ready;
  if (status !== 200) throw new Error(`health ${status}`);
  return {
    start() {
      child.send({ start: true });
    },
    async stop() {
      const answer = once(child, 'message') as Promise<[{ latencies: number[]; statuses: Record<string, number> }]>;
      child.send({ stop: true });
      const [{ latencies, statuses }] = await answer;
      await once(child, 'exit');
      const bad = Object.keys(statuses).filter((s) => s !== '200');
      if (bad.length) throw new Error(`health answered ${JSON.stringify(statuses)}`);
      return latencies;
    },
  };
}

/** The host's heap as its preloaded probe (bench/heap-probe.cjs) reports it, MB; undefined without the probe. */
async function heapMb(host: RealHost, probeFile: string | undefined): Promise<{ used: number; total: number } | undefined> {
  if (!probeFile) return undefined;
  const count = () => (existsSync(probeFile) ? readFileSync(probeFile, 'utf8').split('\n').filter(Boolean).length : 0);
  const before = count();
  process.kill(host.pid, 'SIGWINCH');
  for (let i = 0; i < 200 && count() === before; i++) await new Promise((r) => setTimeout(r, 5));
  const last = readFileSync(probeFile, 'utf8').trim().split('\n').at(-1);
  if (!last || count() === before) return undefined;
  const m = JSON.parse(last) as { heapUsed: number; heapTotal: number };
  return { used: m.heapUsed / 2 ** 20, total: m.heapTotal / 2 ** 20 };
}

async function rssLine(label: string, host: RealHost, probeFile?: string): Promise<string> {
  const kids = descendants(host.pid);
  const workers = kids.map(rssMb).filter(Number.isFinite);
  const heap = await heapMb(host, probeFile);
  return `| ${label} | ${fmt(rssMb(host.pid), 0)} | ${heap ? `${fmt(heap.used, 0)} / ${fmt(heap.total, 0)}` : 'n/a'} | ${workers.length} | ${fmt(workers.reduce((a, b) => a + b, 0), 0)} |`;
}

/** The highest RSS of a process sampled every 100 ms until stopped (MB). */
function rssPeak(pid: number): () => number {
  let peak = rssMb(pid);
  const timer = setInterval(() => {
    peak = Math.max(peak, rssMb(pid));
  }, 100);
  return () => {
    clearInterval(timer);
    return Math.max(peak, rssMb(pid));
  };
}

export async function publishWorkflow(c: Client, tool: string): Promise<string> {
  const def = await c.call('POST', '/api/workflows', { name: `bench-${Math.random().toString(36).slice(2)}`, description: '', inputSchema: { type: 'object' }, plan: { steps: [{ id: 's0', tool, arguments: {} }] } });
  if (def.status >= 300) throw new Error(`workflow: ${JSON.stringify(def.body)}`);
  const pub = await c.call('POST', `/api/workflows/${def.body.id}/publish`, { revision: def.body.revision });
  if (pub.status >= 300) throw new Error(`publish: ${JSON.stringify(pub.body)}`);
  return def.body.id as string;
}

async function drained(c: Client): Promise<void> {
  for (;;) {
    const cap = (await c.call('GET', '/api/agent/tasks/capacity')).body as { running: number; queued: number };
    if (cap.running + cap.queued === 0) return;
    await new Promise((r) => setTimeout(r, 2));
  }
}

/** Paced submissions in the half-load phase: enough that its p99 is not set by a handful of waits. */
export const HALF_LOAD_TASKS = 2500;
/** The half-load phase is cut to this many seconds of paced submissions on a slow (loaded) machine. */
const HALF_LOAD_MAX_S = 20;

/** One task of the half-load phase: its queue wait (ms), whether it was queued, and when it was submitted (host's clock). */
export interface TaskWait {
  waitMs: number;
  queued: boolean;
  submittedMs: number;
}

/**
 * Background tasks over HTTP: dispatches/s with the queue kept full, then enqueue → start at half
 * that rate. Each task's wait is its own `queueWaitMs`, read from the submission's answer when the
 * task started at once (the answer comes after its start), else from `GET …/output` once it ended:
 * never by reading every task afterwards, when only the newest 100 finished ones are kept. A
 * queued task the host pruned before its output call (a client slowed by a loaded machine) is
 * counted apart; more than 1 % of them fails the phase.
 */
export async function tasksOverHttp(c: Client, workflowId: string, n: number, halfLoadTasks = HALF_LOAD_TASKS) {
  const submit = async (): Promise<{ id: string; queued: boolean; queueWaitMs: unknown; submittedAt: string }> => {
    for (;;) {
      const r = await c.call('POST', '/api/agent/tasks', { workflowId, priority: 'interactive', permissionMode: 'full-access' });
      if (r.status === 202) return r.body;
      if (r.status !== 429) throw new Error(`task submit ${r.status} ${JSON.stringify(r.body)}`);
      await new Promise((res) => setTimeout(res, 2)); // the queue is full: try again shortly (not the advised 1 s, to keep it full)
    }
  };
  await Promise.all(Array.from({ length: 16 }, submit));
  await drained(c);
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next < n) {
        next++;
        await submit();
      }
    }),
  );
  await drained(c);
  const rate = (n * 1000) / (performance.now() - t0);
  // half load: paced submissions, the queue wait of each from its own task
  const half = rate / 2;
  const waits: TaskWait[] = [];
  const lost: string[] = [];
  const waitOf = async (): Promise<void> => {
    const t = await submit();
    let snap: { queueWaitMs?: unknown; state?: string } = t;
    if (t.queued) snap = (await c.call('GET', `/api/agent/tasks/${t.id}/output?timeoutMs=60000`)).body;
    if (typeof snap.queueWaitMs === 'number' && snap.state !== 'cancelled') waits.push({ waitMs: snap.queueWaitMs, queued: t.queued, submittedMs: Date.parse(t.submittedAt) });
    else lost.push(t.id);
  };
  const s0 = performance.now();
  const pending: Promise<void>[] = [];
  const paced = Math.min(halfLoadTasks, Math.max(300, Math.round(half * HALF_LOAD_MAX_S)));
  for (let i = 0; i < paced; i++) {
    const wait = s0 + (i * 1000) / half - performance.now();
    if (wait > 1) await new Promise((r) => setTimeout(r, wait));
    pending.push(waitOf());
  }
  await Promise.all(pending);
  const pacedSeconds = (performance.now() - s0) / 1000;
  await drained(c);
  // a queued task is read once it ended; on a slow client the host may have pruned it by then
  if (lost.length > paced / 100) throw new Error(`${lost.length} of ${paced} tasks gave no queue wait (first: ${lost[0]})`);
  return { rate, half, waits, pacedSeconds, lost: lost.length };
}

/** Webhook deliveries with an event id each, in waves of 32 (one owner's interactive allowance), each wave run to its end. */
async function webhooksOverHttp(c: Client, workflowId: string, waves: number) {
  const made = await c.call('POST', `/api/workflows/${workflowId}/webhooks`, { permissionMode: 'full-access' });
  if (made.status >= 300) throw new Error(`trigger: ${JSON.stringify(made.body)}`);
  const path = `/api/workflow-hooks/${made.body.trigger.id}`;
  const headers = (id: string) => ({ 'x-fengyu-webhook-secret': made.body.secret as string, 'x-fengyu-event-id': id });
  const latencies: number[] = [];
  let accepted = 0;
  let acceptMs = 0;
  const t0 = performance.now();
  for (let w = 0; w < waves; w++) {
    const a0 = performance.now();
    const statuses = await Promise.all(
      Array.from({ length: 32 }, async (_, i) => {
        const s = performance.now();
        const r = await c.call('POST', path, {}, headers(`ev-${w}-${i}`));
        latencies.push(performance.now() - s);
        return r.status;
      }),
    );
    acceptMs += performance.now() - a0;
    accepted += statuses.filter((s) => s === 202).length;
    if (statuses.some((s) => s !== 202)) throw new Error(`delivery answers: ${statuses.join(',')}`);
    await drained(c);
  }
  // one event delivered 32 times at once: exactly one task
  const dup = await Promise.all(Array.from({ length: 32 }, () => c.call('POST', path, {}, headers('same-event'))));
  const tasks = new Set(dup.map((r) => r.body?.taskId ?? r.body?.task?.id));
  return { acceptedPerSecond: (accepted * 1000) / acceptMs, endToEnd: (accepted * 1000) / (performance.now() - t0), latencies, duplicateTasks: tasks.size };
}

/** Progress on stderr (the tables go to stdout). */
const note = (what: string) => process.stderr.write(`[host bench ${new Date().toISOString().slice(11, 19)}] ${what}\n`);

/**
 * `BENCH_HOST_ONLY=chains,dag,rps,health,tasks,full` runs only those sections of the host figures
 * (while iterating on one of them; the skipped ones print n/a). Unset: every section.
 */
const ONLY = process.env.BENCH_HOST_ONLY?.split(',').map((x) => x.trim()).filter(Boolean);
const want = (section: string) => !ONLY || ONLY.includes(section);

const stats = (v: number[]) => `${fmt(median(v), 2)} | ${fmt(p99(v), 2)}`;
const totals = (ts: RunTiming[]) => ts.map((t) => t.totalMs);

export async function run(opts: { quick?: boolean } = {}): Promise<BenchResult> {
  const quick = !!opts.quick;
  const reps = quick ? 5 : Number(process.env.BENCH_REPS ?? 20);
  const lines: string[] = [];
  const ratios: Record<string, number> = {};
  lines.push(`load before: ${loadAverage()}`);

  note('floors');
  const echo = await echoFloor(quick ? 2000 : 10_000);
  const floorN = await sqliteFloor('normal', quick ? 1000 : 4000);
  const bareStarts: number[] = [];
  for (let i = 0; i < 3; i++) {
    const f = await floorProcess(['http']);
    bareStarts.push(f.startMs);
    f.stop();
  }

  const home = mkdtempSync(join(tmpdir(), 'fengyu-bench-host-'));
  const fullHome = mkdtempSync(join(tmpdir(), 'fengyu-bench-host-full-'));
  let host: RealHost | undefined;
  try {
    note('cold starts');
    // `npm start` = its build check (rebuilds only what changed) + `serve`
    execFileSync(process.execPath, [join(ROOT, 'scripts/build-if-changed.mjs')], { cwd: ROOT, stdio: 'ignore' }); // builds what changed
    const b0 = performance.now();
    execFileSync(process.execPath, [join(ROOT, 'scripts/build-if-changed.mjs')], { cwd: ROOT, stdio: 'ignore' }); // nothing changed now
    const buildCheckMs = performance.now() - b0;
    // cold start: the first start installs the bundled plugins; later starts find nothing changed
    host = await startRealHost(home);
    const firstStart = host.startMs;
    const starts: number[] = [];
    for (let i = 0; i < (quick ? 1 : 3); i++) {
      await host.stop();
      host = await startRealHost(home);
      starts.push(host.startMs);
    }
    // The workload's host: restarted once more (not timed) with the heap probe preloaded, so the
    // memory rows can print its heap beside its RSS.
    const probeFile = join(home, 'heap-probe.jsonl');
    await host.stop();
    host = await startRealHost(home, { NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --require ${join(ROOT, 'bench/heap-probe.cjs')}`.trim(), FENGYU_BENCH_HEAP_OUT: probeFile });
    const c = new Client(host.url, host.token);
    const health = (await c.call('GET', '/api/health')).body as { posture: { mode: string; backend: string } };
    lines.push('', `## the real host (\`bin/fengyu.mjs serve\`, compiled dist/host, its own process; plugins ${health.posture.mode} (${health.posture.backend}); SQLite file, WAL, synchronous=NORMAL)`, '');
    lines.push('| cold start | ms | floor: bare Node HTTP server, ms | ratio |', '|---|---|---|---|');
    lines.push(`| \`serve\`, first start on an empty home (installs the bundled plugins) | ${fmt(firstStart, 0)} | ${fmt(median(bareStarts), 0)} | ${fmt(firstStart / median(bareStarts), 1)}× |`);
    lines.push(`| \`serve\`, restart on the same home (median of ${starts.length}) | ${fmt(median(starts), 0)} | ${fmt(median(bareStarts), 0)} | ${fmt(median(starts) / median(bareStarts), 1)}× |`);
    lines.push(`| \`npm start\` when nothing changed: its build check (${fmt(buildCheckMs, 0)} ms) + \`serve\` restart | ${fmt(buildCheckMs + median(starts), 0)} | ${fmt(median(bareStarts), 0)} | ${fmt((buildCheckMs + median(starts)) / median(bareStarts), 1)}× |`);
    ratios.serve_start_vs_bare_node = median(starts) / median(bareStarts);
    ratios.serve_first_start_vs_bare_node = firstStart / median(bareStarts);

    const rss: string[] = ['| host memory | host process RSS MB | its heap used / total MB | plugin worker processes | their RSS MB |', '|---|---|---|---|---|', await rssLine('after start, before any run', host, probeFile)];
    const peak = rssPeak(host.pid);

    // idle health
    const idleHealth = await healthWhile(c, undefined, quick ? 100 : 300);

    note('chains');
    const chains = want('chains') ? await interleaved(c, { builtin: chainOf(BUILTIN, 40), plugin: chainOf(PLUGIN, 40) }, reps) : { builtin: [], plugin: [] };
    rss.push(await rssLine('idle after the plugin chains (workers started)', host, probeFile));
    const b = median(totals(chains.builtin ?? []));
    const p = median(totals(chains.plugin ?? []));
    const addedUs = ((p - b) / 40) * 1000;
    lines.push('', `| 40-step chain, POST → \`complete\` over SSE (${reps} runs each, interleaved) | median ms | p99 ms | per step (median ÷ 40) ms | goal |`, '|---|---|---|---|---|');
    lines.push(`| built-in read tool (${BUILTIN}) | ${stats(totals(chains.builtin ?? []))} | ${fmt(b / 40, 3)} | ≤ 40 ms end to end |`);
    lines.push(`| plugin read tool (${PLUGIN}, a worker process) | ${stats(totals(chains.plugin ?? []))} | ${fmt(p / 40, 3)} | ≤ 1.3× the built-in chain |`);
    lines.push('', '| plugin step | µs | floor: bare NDJSON echo over stdio (median / p99 µs) | ratio |', '|---|---|---|---|');
    lines.push(`| added per plugin step (plugin chain − built-in chain) ÷ 40 | ${fmt(addedUs, 0)} | ${fmt(median(echo), 1)} / ${fmt(p99(echo), 1)} | ${fmt(addedUs / median(echo), 1)}× (goal ≤ 1.5×) |`);
    // a section left out by BENCH_HOST_ONLY has no ratio (a NaN would read as a regression)
    if (want('chains')) {
      ratios.plugin_chain_vs_builtin_chain = p / b;
      ratios.plugin_step_added_vs_echo = addedUs / median(echo);
    }

    // Live SSE. The goal's figure: a subscriber connected before the first step (plan approval on,
    // the default: POST, subscribe, approve), as a person follows a run in the UI. Beside it, the
    // chains above, whose client subscribes only after the POST's answer: a run that begins at once
    // may finish its first steps (or all of them) before that subscription, and those arrive in the
    // replay; that figure measures the subscription's race with the run, not the stream.
    const watched: Array<RunTiming & { approvedAt: number }> = [];
    if (want('chains')) for (let i = 0; i < reps; i++) watched.push(await runWatched(c, chainOf(BUILTIN, 40)));
    // The same, with the plugin read tool: its steps wait on a worker process, so their ends are
    // committed in later turns (held commits) than the built-in tool's.
    const watchedPlugin: Array<RunTiming & { approvedAt: number }> = [];
    if (want('chains')) for (let i = 0; i < reps; i++) watchedPlugin.push(await runWatched(c, chainOf(PLUGIN, 40)));
    // When the first step's end reached the subscriber, as a share of the run (approval → complete):
    // ≈ 1/40 for a stream that publishes each step's end once committed, ≈ 1 for one burst at the end.
    const firstShare = watched.map((t) => firstFrameShare(t, t.approvedAt)).filter(Number.isFinite);
    const firstSharePlugin = watchedPlugin.map((t) => firstFrameShare(t, t.approvedAt)).filter(Number.isFinite);
    if (want('chains')) ratios.sse_first_frame_share = median(firstShare);
    const live = watched.map(liveFraction).filter(Number.isFinite);
    const raced = (chains.builtin ?? []).map(liveFraction).filter(Number.isFinite);
    if (want('chains')) ratios.sse_live_fraction = median(live);

    note('dag vs serial');
    const shapes = want('dag') ? await interleaved(c, { serial: chainOf(BUILTIN, 64), dag: dagOf(BUILTIN, 8, 8) }, quick ? 3 : Math.max(5, reps / 2)) : { serial: [], dag: [] };
    const serial = median(totals(shapes.serial ?? []));
    const dag = median(totals(shapes.dag ?? []));
    lines.push('', '| 64 steps, POST → `complete` | median ms | p99 ms | ratio to serial | goal |', '|---|---|---|---|---|');
    lines.push(`| serial chain of 64 | ${stats(totals(shapes.serial ?? []))} | 1.00 | |`);
    lines.push(`| DAG: 8 levels × 8 independent steps (maxConcurrency 8) | ${stats(totals(shapes.dag ?? []))} | ${fmt(dag / serial, 2)} | ≤ 0.6 |`);
    if (want('dag')) ratios.dag_vs_serial = dag / serial;
    // The same shapes with the plugin read tool: steps that wait on another process, where overlap can pay.
    const pshapes = want('dag') && !quick ? await interleaved(c, { serial: chainOf(PLUGIN, 64), dag: dagOf(PLUGIN, 8, 8) }, Math.max(5, reps / 2)) : { serial: [], dag: [] };
    if ((pshapes.serial ?? []).length) {
      const pserial = median(totals(pshapes.serial ?? []));
      const pdag = median(totals(pshapes.dag ?? []));
      lines.push(`| plugin read tool (${PLUGIN}): serial chain of 64 | ${stats(totals(pshapes.serial ?? []))} | 1.00 | |`);
      lines.push(`| plugin read tool: DAG 8 levels × 8 (maxConcurrency 8) | ${stats(totals(pshapes.dag ?? []))} | ${fmt(pdag / pserial, 2)} | (not a goal: shown beside the built-in rows) |`);
    }

    note('runs/s');
    // The goal's row: a client like the floor's own (one plain HTTP request per stream over its
    // kept-alive connections, reading the SSE bytes, as curl or a Node program would), the host
    // and the floor each warmed alike and measured in alternated windows (runsAgainstFloor). The
    // EventSource row beside it is the same runs with an `EventSource` object per run (a browser's
    // way), shown for comparison and not a goal: that client's own CPU per run is several times
    // the floor client's, on the same two cores.
    const pace = quick ? { warmMs: 4000, windowMs: 1000, windows: 2 } : { warmMs: 4000, windowMs: 2000, windows: 3 };
    const paced = want('rps') ? await runsAgainstFloor(c, 'normal', pace) : undefined;
    const rps = paced?.host ?? { perSecond: Number.NaN, latencies: [] as number[], windows: [], firstSecond: Number.NaN };
    const rpsFloor = paced?.floor ?? { perSecond: Number.NaN, latencies: [] as number[], windows: [], firstSecond: Number.NaN };
    const rpsEs = want('rps') ? await runsPerSecond(c, quick ? 80 : 400) : { perSecond: Number.NaN, latencies: [] as number[] };
    const rates = (p: Paced) => p.windows.map((w) => fmt(w, 0)).join(', ');
    lines.push(
      '',
      `| 8 concurrent clients; each side warmed ${fmt(pace.warmMs / 1000, 1)} s, then ${pace.windows} windows of ${fmt(pace.windowMs / 1000, 1)} s alternated floor, host, … | per second | median ms | p99 ms | ratio to floor | goal |`,
      '|---|---|---|---|---|---|',
    );
    lines.push(`| floor: bare Fastify route, one SQLite insert (NORMAL); windows ${rates(rpsFloor)}/s | ${fmt(rpsFloor.perSecond, 0)} | ${stats(rpsFloor.latencies)} | 1.00 | |`);
    lines.push(
      `| 1-step runs (POST → \`complete\` read from the run's SSE stream as plain HTTP, like the floor's client); windows ${rates(rps)}/s | ${fmt(rps.perSecond, 0)} | ${stats(rps.latencies)} | ${fmt(rps.perSecond / rpsFloor.perSecond, 3)} | ≥ 0.25, p99 ≤ 50 ms |`,
    );
    lines.push(
      `| the warm-up's first second (not a goal): floor ${fmt(rpsFloor.firstSecond, 0)}/s, 1-step runs ${fmt(rps.firstSecond, 0)}/s | | | | ${fmt(rps.firstSecond / rpsFloor.firstSecond, 3)} | |`,
    );
    lines.push(`| the same 1-step runs with an EventSource client (one \`EventSource\` object per run, 400 runs after the above; not a goal) | ${fmt(rpsEs.perSecond, 0)} | ${stats(rpsEs.latencies)} | ${fmt(rpsEs.perSecond / rpsFloor.perSecond, 3)} | |`);
    if (want('rps')) ratios.runs_per_second_vs_floor = rps.perSecond / rpsFloor.perSecond;

    note('health under load');
    // two probes at once: one from a process of its own (the goal's: a monitor is a separate program;
    // booted and connected before the chains start), one from the bench's process, whose loop also
    // serves the 8 chains' stream clients
    const prober = want('health') ? await startProber(host) : undefined;
    const busy = prober
      ? Promise.all(Array.from({ length: 8 }, async () => {
          for (let i = 0; i < (quick ? 2 : 10); i++) await runWorkflow(c, chainOf(BUILTIN, 40));
        }))
      : undefined;
    prober?.start();
    const busyHealth = busy ? await healthWhile(c, busy, 0) : [];
    await busy;
    const apart = prober ? await prober.stop() : [];
    lines.push('', '| `GET /api/health` | answers | median ms | p99 ms | goal |', '|---|---|---|---|---|');
    lines.push(`| idle host | ${idleHealth.length} | ${stats(idleHealth)} | |`);
    lines.push(`| while 8 clients run 40-step chains back to back, probed from a process of its own | ${apart.length} | ${stats(apart)} | p99 ≤ 20 ms |`);
    lines.push(`| the same, probed at the same time from the bench's process (its loop also serves the chains' stream clients; not a goal) | ${busyHealth.length} | ${stats(busyHealth)} | |`);
    if (want('health')) ratios.health_p99_busy_vs_idle = p99(apart) / p99(idleHealth);
    lines.push('', `SSE: share of a 40-step built-in run's step time seen live (span of step_complete as received ÷ as committed, server timestamps in whole ms), median of ${live.length} runs:`);
    lines.push(`- subscriber connected before the first step (plan approval on: POST, subscribe, approve): ${fmt(median(live) * 100, 0)}% (goal ≥ 50%)`);
    lines.push(`- subscriber connecting after the POST's answer (planApproval false, the chains above; not a goal): ${fmt(median(raced) * 100, 0)}%`);
    lines.push(
      `SSE: when the first step_complete reached the subscriber (connected before the first step, as above), as a share of the run's time at the client (approval sent → \`complete\` received; ≈ 2.5 % when each step's end is sent once committed, ≈ 100 % when the frames come in one burst at the end), median of ${firstShare.length} / ${firstSharePlugin.length} runs:`,
    );
    lines.push(`- 40-step built-in chain: ${fmt(median(firstShare) * 100, 0)}% (p90 ${fmt(quantile(firstShare, 0.9) * 100, 0)}%; run ${fmt(median(watched.map((t) => t.endAt - t.approvedAt)), 1)} ms)`);
    lines.push(`- 40-step plugin chain: ${fmt(median(firstSharePlugin) * 100, 0)}% (p90 ${fmt(quantile(firstSharePlugin, 0.9) * 100, 0)}%; run ${fmt(median(watchedPlugin.map((t) => t.endAt - t.approvedAt)), 1)} ms)`);

    if (!quick && want('tasks')) {
      const wfId = await publishWorkflow(c, BUILTIN);
      note('tasks');
      const tasks = await tasksOverHttp(c, wfId, 300);
      lines.push('', '| background tasks over HTTP (1-step workflow bodies) | value | floor | ratio |', '|---|---|---|---|');
      lines.push(`| task dispatches/s, queue kept full by 16 submitters (each task a real run) | ${fmt(tasks.rate, 0)} | ${fmt(floorN.perSecond, 0)} req/s (Fastify + 1 insert) | ${fmt(tasks.rate / floorN.perSecond, 3)} |`);
      const w = tasks.waits.map((x) => x.waitMs);
      const queuedN = tasks.waits.filter((x) => x.queued).length;
      lines.push(
        `| enqueue → start at half load: ${w.length} tasks paced at ${fmt(tasks.half, 0)}/s over ${fmt(tasks.pacedSeconds, 1)} s (${queuedN} found no free slot and queued${tasks.lost ? `; ${tasks.lost} more queued and were pruned before they could be read, left out` : ''}); each task's own queueWaitMs = the host's sub-millisecond clock from its admission (the capacity check passed, before its creation is committed) to its dispatch (creation committed, a slot given, its start recorded; the body's run begins in the same turn); HTTP not included. p50 / p90 / p99 / max ms | ${fmt(quantile(w, 0.5), 3)} / ${fmt(quantile(w, 0.9), 3)} / ${fmt(p99(w), 3)} / ${fmt(Math.max(...w), 3)} | | goal p99 ≤ 5 ms |`,
      );
      note('webhooks');
      const hooks = await webhooksOverHttp(c, wfId, 10);
      lines.push('', '| webhook deliveries over HTTP (event id each: a claim row + audit row) | value | floor | ratio |', '|---|---|---|---|');
      lines.push(
        `| acceptance itself: 202s/s while a wave of 32 is sent to an idle executor (the queue has room; the tasks run a 1-step workflow after their answer) | ${fmt(hooks.acceptedPerSecond, 0)} | ${fmt(floorN.perSecond, 0)} req/s | ${fmt(hooks.acceptedPerSecond / floorN.perSecond, 3)} |`,
      );
      lines.push(`| accept latency median / p99 ms | ${fmt(median(hooks.latencies), 2)} / ${fmt(p99(hooks.latencies), 2)} | ${fmt(median(floorN.latencies), 2)} / ${fmt(p99(floorN.latencies), 2)} | p99 ${fmt(p99(hooks.latencies) / p99(floorN.latencies), 1)}× |`);
      lines.push(`| deliveries/s end to end (each wave's tasks run to their end) | ${fmt(hooks.endToEnd, 0)} | | |`);
      lines.push(`| one event id delivered 32 times at once → distinct tasks | ${hooks.duplicateTasks} | | must be 1 |`);
    }

    rss.push(`| peak during the workload (sampled every 100 ms) | ${fmt(peak(), 0)} | | | |`);
    // The host gives memory back once idle (cli/idle-release.ts: a full collection after ≈ 2 s
    // quiet, a second ≈ 30 s later that lets V8 shrink its young generation): RSS right after the
    // workload and after each step of that release, all printed.
    await new Promise((r) => setTimeout(r, 500));
    rss.push(await rssLine('0.5 s after the whole workload', host, probeFile));
    await new Promise((r) => setTimeout(r, 4500));
    rss.push(await rssLine('5 s after (idle: the first collection done)', host, probeFile));
    if (!quick) {
      await new Promise((r) => setTimeout(r, 35_000));
      rss.push(await rssLine('40 s after (idle: the young generation given back)', host, probeFile));
    }
    lines.push('', ...rss);
    c.close();
    await host.stop();
    host = undefined;

    if (!quick && want('full') && paced) {
      note('synchronous=FULL');
      // durability side by side: the same figures with synchronous=FULL
      const full = await startRealHost(fullHome, { FENGYU_DB_SYNC: 'full' });
      host = full;
      const cf = new Client(full.url, full.token);
      const fullChains = await interleaved(cf, { builtin: chainOf(BUILTIN, 40) }, reps);
      const fullPaced = await runsAgainstFloor(cf, 'full', pace);
      cf.close();
      lines.push('', '| durability (SQLite WAL) | 40-step chain median ms | 1-step runs/s (8 clients, plain-HTTP stream client, paced as above) | floor req/s (Fastify + 1 insert, same durability) | runs ÷ floor |', '|---|---|---|---|---|');
      lines.push(`| synchronous=NORMAL (the host's setting) | ${fmt(b, 1)} | ${fmt(rps.perSecond, 0)} | ${fmt(rpsFloor.perSecond, 0)} | ${fmt(rps.perSecond / rpsFloor.perSecond, 3)} |`);
      lines.push(
        `| synchronous=FULL (\`FENGYU_DB_SYNC=full\`) | ${fmt(median(totals(fullChains.builtin ?? [])), 1)} | ${fmt(fullPaced.host.perSecond, 0)} | ${fmt(fullPaced.floor.perSecond, 0)} | ${fmt(fullPaced.host.perSecond / fullPaced.floor.perSecond, 3)} |`,
      );
      await full.stop();
      host = undefined;
    }
  } finally {
    await host?.stop();
    rmSync(home, { recursive: true, force: true });
    rmSync(fullHome, { recursive: true, force: true });
  }
  lines.push('', `load after: ${loadAverage()}`);
  return { lines, ratios };
}
