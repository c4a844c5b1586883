import { type ChildProcess, spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync, readlinkSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The host as a user runs it (`fengyu serve --port 0`: the compiled host bin/fengyu.mjs runs) on a given home, with the
 * crash point in its environment, and what the campaign reads from the outside: host.json for
 * the address, HTTP for the API, SSE frames as received, and the process table.
 */

export const ROOT = join(import.meta.dirname, '..');

/** How long the campaign waits for an answer from a live host (a stream: twice this) before it counts as hung. */
export const REQUEST_TIMEOUT_MS = 60_000;

export interface HostProc {
  url: string;
  token: string;
  pid: number;
  proc: ChildProcess;
  /** Resolves with how the process ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr: () => string;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * A frozen copy of the compiled host for one campaign: `<dir>/dist/host` copied, everything else of
 * the repository linked beside it (the bundle finds the repository where its dist/host/ is). A
 * rebuild of dist/host while a long campaign runs (another campaign, a build) does not change the
 * host under test. Returns the copy's entry.
 */
export function snapshotHost(dir: string): string {
  mkdirSync(join(dir, 'dist'), { recursive: true });
  for (const e of readdirSync(ROOT)) if (e !== 'dist' && e !== '.git') symlinkSync(join(ROOT, e), join(dir, e));
  cpSync(join(ROOT, 'dist/host'), join(dir, 'dist/host'), { recursive: true });
  return join(dir, 'dist/host/fengyu.mjs');
}

/**
 * Starts a host (the compiled entry `entry`, as bin/fengyu.mjs runs it once built) and waits for
 * its host.json and a healthy answer; rejects when it dies first.
 */
export async function startHost(entry: string, home: string, token: string, crashAt?: string, logFile?: (chunk: string) => void): Promise<HostProc> {
  const env: Record<string, string | undefined> = { ...process.env, FENGYU_TOKEN: token, FENGYU_LOG_LEVEL: 'warn', FENGYU_CRASH_AT: crashAt };
  if (!crashAt) delete env.FENGYU_CRASH_AT;
  const hostFile = join(home, 'host.json');
  const before = existsSync(hostFile) ? readFileSync(hostFile, 'utf8') : '';
  // the compiled host started directly: the campaign built it or checked it is current before its
  // first trial, so each start skips bin's stamp of the sources (≈ 0.1 s of CPU per start)
  const proc = spawn(process.execPath, [entry, 'serve', '--port', '0', '--home', home], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env });
  let err = '';
  proc.stderr?.on('data', (d) => {
    err += d;
    if (err.length > 64_000) err = err.slice(-32_000);
    logFile?.(String(d));
  });
  proc.stdout?.on('data', (d) => logFile?.(String(d)));
  let dead: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.on('exit', (code, signal) => {
      dead = { code, signal };
      resolve(dead);
    }),
  );
  for (let i = 0; ; i++) {
    if (dead) throw new Error(`host exited (${dead.code ?? dead.signal}) before listening: ${err.slice(-2000)}`);
    if (i > 1200) throw new Error('host did not start within 60 s');
    const text = existsSync(hostFile) ? readFileSync(hostFile, 'utf8') : '';
    if (text && text !== before) {
      try {
        const info = JSON.parse(text) as { url: string; pid: number };
        if (info.pid === proc.pid) {
          const r = await fetch(`${info.url}/api/health`, { headers: { 'x-fengyu-token': token } }).catch(() => undefined);
          if (r?.ok) return { url: info.url, token, pid: proc.pid as number, proc, exited, stderr: () => err };
        }
      } catch {
        // written half: read again
      }
    }
    await sleep(50);
  }
}

export interface Api {
  (method: string, path: string, body?: unknown): Promise<{ status: number; body: any }>;
}

export function apiOf(h: { url: string; token: string }): Api {
  return async (method, path, body) => {
    const res = await fetch(`${h.url}${path}`, {
      method,
      headers: { 'x-fengyu-token': h.token, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
      body: body !== undefined ? JSON.stringify(body) : undefined,
      // generous: a host starved of CPU (a nice-19 campaign on a busy machine) answers slowly, which breaks no invariant; a hung one still fails the trial
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON
    }
    return { status: res.status, body: parsed as any };
  };
}

export interface Frame {
  seq: number;
  event: string;
  data: any;
}

/**
 * Reads a run's SSE stream and records every frame as received, in order. `onFrame` sees each
 * (gates are answered from it). Resolves when the stream ends (a terminal event, or the host
 * died), or once the frame `stopAtSeq` arrived (a live run's replay: a run parked at a gate
 * sends nothing more until it is answered).
 */
export async function recordStream(h: { url: string; token: string }, runId: string, frames: Frame[], onFrame?: (f: Frame) => void, afterSeq?: number, stopAtSeq?: number): Promise<void> {
  const headers: Record<string, string> = { 'x-fengyu-token': h.token, accept: 'text/event-stream' };
  if (afterSeq !== undefined) headers['last-event-id'] = String(afterSeq);
  let res: Response;
  try {
    res = await fetch(`${h.url}/api/agent/stream?runId=${encodeURIComponent(runId)}`, { headers, signal: AbortSignal.timeout(2 * REQUEST_TIMEOUT_MS) });
  } catch {
    return;
  }
  if (!res.ok || !res.body) return;
  if (stopAtSeq !== undefined && stopAtSeq <= (afterSeq ?? 0)) return void res.body.cancel().catch(() => undefined);
  const decoder = new TextDecoder();
  let buf = '';
  try {
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buf += decoder.decode(chunk, { stream: true });
      for (let cut = buf.indexOf('\n\n'); cut >= 0; cut = buf.indexOf('\n\n')) {
        const block = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        let id: number | undefined;
        let event = 'message';
        const data: string[] = [];
        for (const line of block.split('\n')) {
          if (line.startsWith('id:')) id = Number(line.slice(3).trim());
          else if (line.startsWith('event:')) event = line.slice(6).trim();
          else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
        }
        if (id === undefined || data.length === 0) continue;
        const f: Frame = { seq: id, event, data: JSON.parse(data.join('\n')) };
        frames.push(f);
        onFrame?.(f);
        if (stopAtSeq !== undefined && f.seq >= stopAtSeq) return void res.body.cancel().catch(() => undefined);
      }
    }
  } catch (e) {
    // the host died under the stream: what was received is what counts
    if (process.env.CRASH_DEBUG) process.stderr.write(`stream ${runId} ended: ${(e as Error).stack}\n`);
  }
}

/**
 * Processes (other than `exceptPids`) that belong to a host's home: their working directory is
 * inside it or their environment names it (commands run in the home's scratch folders, plugin
 * workers have their data folder there). Read from /proc.
 */
export function processesOf(home: string, exceptPids: number[] = []): Array<{ pid: number; cmd: string }> {
  const out: Array<{ pid: number; cmd: string }> = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    const pid = Number(d);
    if (pid === process.pid || exceptPids.includes(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      let cwd = '';
      try {
        cwd = readlinkSync(`/proc/${d}/cwd`);
      } catch {
        // another user's process
      }
      const environ = readFileSync(`/proc/${d}/environ`, 'utf8');
      if (cwd.startsWith(home) || environ.includes(home)) out.push({ pid, cmd: readFileSync(`/proc/${d}/cmdline`, 'utf8').replaceAll('\0', ' ').trim() });
    } catch {
      // gone, or not ours
    }
  }
  return out;
}

/** A small seeded PRNG (mulberry32): the same seed gives the same trials. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export { sleep };
