import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
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
 * The cost of a plugin call: median round trip of a no-op method on a warm worker (SDK runtime,
 * process manager with timeout/cancel plumbing), 10,000 sequential calls and 10,000 with 8 in
 * flight, against the floor — a bare child echoing newline-delimited JSON, driven by the same
 * framing client. Aim (issue 3): within 1.5× of the floor.
 */

const CALLS = 10_000;
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

async function measure(call: () => Promise<unknown>, inFlight: number): Promise<number[]> {
  for (let i = 0; i < WARMUP; i++) await call();
  const times: number[] = [];
  let next = 0;
  const lane = async () => {
    while (next < CALLS) {
      next++;
      const t0 = performance.now();
      await call();
      times.push((performance.now() - t0) * 1000);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  return times;
}

async function probeTarget(home: string): Promise<WorkerTarget> {
  const fixture = join(import.meta.dirname, '../packages/host/test/plugins/fixtures/test-plugin');
  const { file } = await packPlugin(fixture, join(home, 'probe.fyp'));
  const root = join(home, 'plugins/test.fengyu.probe/1.0.0');
  await extractPackage(file, root);
  const dataDir = join(home, 'plugin-data/test.fengyu.probe');
  mkdirSync(dataDir, { recursive: true });
  return { pluginId: 'test.fengyu.probe', version: '1.0.0', root, dataDir, worker: 'worker.mjs' };
}

export async function run(): Promise<string[]> {
  const home = mkdtempSync(join(tmpdir(), 'fengyu-bench-plugins-'));
  const lines = ['| path | in flight | median µs | p99 µs | ratio to floor (median) |', '|---|---|---|---|---|'];
  try {
    const target = await probeTarget(home);
    const floorChild = spawn(process.execPath, ['-e', ECHO_CHILD], { stdio: ['pipe', 'pipe', 'inherit'] });
    const floor = new RpcConnection(floorChild.stdin, floorChild.stdout);
    const backends = [detectSandbox('off', process.env), detectSandbox('auto', process.env)].filter((b, i) => i === 0 || b.bwrapPath);
    for (const inFlight of [1, 8]) {
      const floorTimes = await measure(() => floor.request('noop', {}), inFlight);
      const floorMedian = median(floorTimes);
      lines.push(`| bare NDJSON echo child (floor) | ${inFlight} | ${fmt(floorMedian, 1)} | ${fmt(p99(floorTimes), 1)} | 1.00 |`);
      for (const backend of backends) {
        const manager = new WorkerManager({ backend, logger: pino({ level: 'silent' }) });
        // A run's signal, as the runner passes one on every call.
        const signal = new AbortController().signal;
        const call = () => manager.invoke({ target, method: 'noop', params: {}, toolName: 'probe_noop', timeoutSeconds: 120, grants: [], signal });
        const times = await measure(call, inFlight);
        lines.push(`| plugin worker, ${backend.posture.mode} (${backend.posture.backend}) | ${inFlight} | ${fmt(median(times), 1)} | ${fmt(p99(times), 1)} | ${fmt(median(times) / floorMedian, 2)} |`);
        await manager.close();
      }
    }
    floorChild.kill();
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  return lines;
}
