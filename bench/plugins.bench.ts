import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { packPlugin } from '@fengyu/plugin-sdk/pack';
import pino from 'pino';
import { extractPackage } from '../packages/host/src/plugins/package-reader';
import { RpcConnection } from '../packages/host/src/plugins/rpc-connection';
import { detectSandbox } from '../packages/host/src/plugins/sandbox';
import { WorkerManager, type WorkerTarget } from '../packages/host/src/plugins/worker-manager';
import { fmt, median, p99 } from './stats';

/**
 * The cost of a plugin call at the worker-manager level (in process, no runner): median round
 * trip on a warm worker through `WorkerManager` (timeout and cancellation plumbing, the SDK
 * runtime with its input and output validation), 10,000 sequential calls and 10,000 with 8 in
 * flight, against the floor — a bare child echoing newline-delimited JSON, driven by the same
 * framing client. Two methods: the probe plugin's no-op, and the bundled e-mail plugin's read
 * tool `email_accounts_list` (the tool the real-host chain calls; it reads its account files).
 * Beside each latency: the CPU time per call of this process (the host side) and of the child
 * (the worker side, from /proc), over the measured calls. Aim (issue 20): within 1.5× of the floor.
 * Last, the echo and the e-mail call paced (an idle wait before each call, as between serial steps).
 */

const CALLS = 10_000;
const PACED_CALLS = 3_000;
const WARMUP = 1_000;

const ECHO_CHILD = `
let buf = '';
process.stdin.setEncoding('utf8');
process.stdin.on('data', (c) => {
  buf += c;
  let nl;
  while ((nl = buf.indexOf('\\n')) >= 0) {
    const line = buf.slice(0, nl);
    buf = buf.slice(nl + 1);
    const m = JSON.parse(line);
    process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: m.id, result: {} }) + '\\n');
  }
});`;

interface Measured {
  times: number[];
  /** CPU µs per call: this process, the child processes. */
  hostCpu: number;
  childCpu: number;
}

/** CPU ms (utime + stime, from /proc) of this process's children that `pick` accepts, and of their descendants; 0 without /proc. */
function childrenCpu(pick: (pid: number) => boolean): number {
  if (!existsSync('/proc')) return 0;
  const kids = (p: number) => {
    try {
      return readFileSync(`/proc/${p}/task/${p}/children`, 'utf8').trim().split(' ').filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  let total = 0;
  const walk = (p: number) => {
    try {
      const stat = readFileSync(`/proc/${p}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      total += (Number(f[11]) + Number(f[12])) * 10;
    } catch {
      // ended meanwhile
    }
    for (const c of kids(p)) walk(c);
  };
  for (const c of kids(process.pid)) if (pick(c)) walk(c);
  return total;
}

/** `paced`: one idle wait (a 1 ms timer, not timed) before each call, as between a run's steps. */
async function measure(call: () => Promise<unknown>, inFlight: number, child: (pid: number) => boolean, paced = false): Promise<Measured> {
  for (let i = 0; i < WARMUP; i++) await call();
  const times: number[] = [];
  let next = 0;
  const calls = paced ? PACED_CALLS : CALLS;
  const lane = async () => {
    while (next < calls) {
      next++;
      if (paced) await new Promise((r) => setTimeout(r, 1));
      const t0 = performance.now();
      await call();
      times.push((performance.now() - t0) * 1000);
    }
  };
  const c0 = process.cpuUsage();
  const k0 = childrenCpu(child);
  await Promise.all(Array.from({ length: inFlight }, lane));
  const c1 = process.cpuUsage(c0);
  const k1 = childrenCpu(child);
  return { times, hostCpu: (c1.user + c1.system) / calls, childCpu: ((k1 - k0) * 1000) / calls };
}

async function installed(home: string, dir: string, id: string, fyp?: string): Promise<WorkerTarget> {
  const file = fyp ?? (await packPlugin(dir, join(home, `${id}.fyp`))).file;
  const root = join(home, `plugins/${id}/1.0.0`);
  await extractPackage(file, root);
  const dataDir = join(home, `plugin-data/${id}`);
  mkdirSync(dataDir, { recursive: true });
  return { pluginId: id, version: '1.0.0', root, dataDir, worker: 'worker.mjs', network: id === 'fan.summer.email' };
}

export async function run(): Promise<string[]> {
  const home = mkdtempSync(join(tmpdir(), 'fengyu-bench-plugins-'));
  const lines = ['| path | in flight | median µs | p99 µs | ratio to floor (median) | CPU µs per call: host / worker |', '|---|---|---|---|---|---|'];
  try {
    const probe = await installed(home, join(import.meta.dirname, '../packages/host/test/plugins/fixtures/test-plugin'), 'test.fengyu.probe');
    const built = join(import.meta.dirname, '../packages/plugins/email/dist/fan.summer.email-1.0.0.fyp');
    const email = await installed(home, join(import.meta.dirname, '../packages/plugins/email'), 'fan.summer.email', existsSync(built) ? built : undefined);
    const methods: Array<[string, WorkerTarget, string]> = [
      ['probe no-op', probe, 'noop'],
      ['e-mail email_accounts_list', email, 'email_accounts_list'],
    ];
    const floorChild = spawn(process.execPath, ['-e', ECHO_CHILD], { stdio: ['pipe', 'pipe', 'inherit'] });
    const floor = new RpcConnection(floorChild.stdin, floorChild.stdout);
    const backends = [detectSandbox('off', process.env), detectSandbox('auto', process.env)].filter((b, i) => i === 0 || b.bwrapPath);
    for (const inFlight of [1, 8]) {
      const f = await measure(() => floor.request('noop', {}), inFlight, (pid) => pid === floorChild.pid);
      const floorMedian = median(f.times);
      lines.push(`| bare NDJSON echo child (floor) | ${inFlight} | ${fmt(floorMedian, 1)} | ${fmt(p99(f.times), 1)} | 1.00 | ${fmt(f.hostCpu, 1)} / ${fmt(f.childCpu, 1)} |`);
      for (const backend of backends) {
        for (const [label, target, method] of methods) {
          const manager = new WorkerManager({ backend, logger: pino({ level: 'silent' }) });
          // A run's signal, as the runner passes one on every call.
          const signal = new AbortController().signal;
          const call = () => manager.invoke({ target, method, params: {}, toolName: method, timeoutSeconds: 120, grants: [], signal });
          const m = await measure(call, inFlight, (pid) => pid !== floorChild.pid);
          lines.push(
            `| ${label}, ${backend.posture.mode} (${backend.posture.backend}) | ${inFlight} | ${fmt(median(m.times), 1)} | ${fmt(p99(m.times), 1)} | ${fmt(median(m.times) / floorMedian, 2)} | ${fmt(m.hostCpu, 1)} / ${fmt(m.childCpu, 1)} |`,
          );
          await manager.close();
        }
      }
    }
    // Paced: each call after an idle wait, as a run's serial steps call a worker (the host, the
    // worker or both go idle in between and are woken by the call). The ratios compare with the
    // back-to-back echo above (the floor of the real-host figure) and with the paced echo.
    const b2b = median((await measure(() => floor.request('noop', {}), 1, (pid) => pid === floorChild.pid)).times);
    const pe = await measure(() => floor.request('noop', {}), 1, (pid) => pid === floorChild.pid, true);
    const paced = median(pe.times);
    lines.push('', '| path, 1 in flight, one idle wait (1 ms timer, not timed) before each call | median µs | p99 µs | ÷ back-to-back echo | ÷ paced echo | CPU µs per call: host / worker |', '|---|---|---|---|---|---|');
    lines.push(`| bare NDJSON echo child | ${fmt(paced, 1)} | ${fmt(p99(pe.times), 1)} | ${fmt(paced / b2b, 2)} (back to back: ${fmt(b2b, 1)}) | 1.00 | ${fmt(pe.hostCpu, 1)} / ${fmt(pe.childCpu, 1)} |`);
    const best = backends.at(-1) as (typeof backends)[number];
    const manager = new WorkerManager({ backend: best, logger: pino({ level: 'silent' }) });
    const signal = new AbortController().signal;
    const m = await measure(() => manager.invoke({ target: email, method: 'email_accounts_list', params: {}, toolName: 'email_accounts_list', timeoutSeconds: 120, grants: [], signal }), 1, (pid) => pid !== floorChild.pid, true);
    lines.push(`| e-mail email_accounts_list, ${best.posture.mode} (${best.posture.backend}) | ${fmt(median(m.times), 1)} | ${fmt(p99(m.times), 1)} | ${fmt(median(m.times) / b2b, 2)} | ${fmt(median(m.times) / paced, 2)} | ${fmt(m.hostCpu, 1)} / ${fmt(m.childCpu, 1)} |`);
    await manager.close();
    floorChild.kill();
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  return lines;
}
