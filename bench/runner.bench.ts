import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { EventSource } from 'eventsource';
import { createHost } from '../packages/host/src/http/server';
import type { Tool } from '../packages/host/src/tools/tool';
import { fmt, median, p99 } from './stats';

/**
 * The runner's own overhead, in the shapes published workflow-engine benchmarks use:
 * (a) a 40-step sequential chain of no-op read steps, (b) a 64-step DAG of 8 levels × 8 parallel
 * no-op steps; each submitted over HTTP and watched over SSE to `complete`. The tool does nothing,
 * so all the time measured is host overhead (validation, events, SQLite commits, SSE).
 */

/** A no-op read tool that records when the host invoked it (in-process, high resolution). */
function tickTool(marks: number[]): Tool {
  return {
    name: 'tick',
    description: 'no-op',
    inputSchema: { type: 'object' },
    effect: 'read',
    source: 'builtin',
    id: 'builtin:tick',
    schemaRevision: '1',
    idempotent: true,
    available: true,
    invoke: async () => {
      marks.push(performance.now());
      return null;
    },
  };
}

const chain = { steps: Array.from({ length: 40 }, (_, i) => ({ id: `s${i}`, tool: 'tick', ...(i ? { dependsOn: [`s${i - 1}`] } : {}) })) };
const dag = {
  steps: Array.from({ length: 64 }, (_, i) => {
    const level = Math.floor(i / 8);
    return { id: `l${level}n${i % 8}`, tool: 'tick', ...(level ? { dependsOn: Array.from({ length: 8 }, (_, j) => `l${level - 1}n${j}`) } : {}) };
  }),
};

interface Sample {
  totalMs: number;
}

async function runOnce(url: string, token: string, workflow: unknown): Promise<Sample> {
  const t0 = performance.now();
  const res = await fetch(`${url}/api/agent/run`, { method: 'POST', headers: { 'x-fengyu-token': token, 'content-type': 'application/json' }, body: JSON.stringify({ workflow, config: { planApproval: false, permissionMode: 'full-access', maxConcurrency: 8 } }) });
  const { runId } = (await res.json()) as { runId: string };
  return new Promise((resolve, reject) => {
    const es = new EventSource(`${url}/api/agent/stream?runId=${runId}&token=${token}`);
    es.addEventListener('complete', () => {
      es.close();
      resolve({ totalMs: performance.now() - t0 });
    });
    es.addEventListener('error', (m: MessageEvent) => {
      if (m.data) {
        es.close();
        reject(new Error(m.data));
      }
    });
  });
}

async function measure(database: 'file' | 'memory', workflow: { steps: unknown[] }, reps: number) {
  const home = mkdtempSync(join(tmpdir(), 'fengyu-bench-'));
  const marks: number[] = [];
  const tool = tickTool(marks);
  const host = await createHost({ home, port: 0, logLevel: 'silent', database, sandbox: 'off', bundledPluginDirs: [], writeHostFile: false, beforeDomains: (ctx) => ctx.catalog.register({ kind: 'builtin', list: async () => [tool] }) });
  try {
    for (let i = 0; i < 3; i++) await runOnce(host.url, host.token, workflow); // warm-up
    const samples: Sample[] = [];
    const gaps: number[] = [];
    const t0 = performance.now();
    for (let i = 0; i < reps; i++) {
      marks.length = 0;
      samples.push(await runOnce(host.url, host.token, workflow));
      // Host overhead per step: time between one step's tool call and the next dependent one's
      // (chain: consecutive calls; DAG: first call of each level after the previous level's last).
      const width = workflow === chain ? 1 : 8;
      for (let j = width; j < marks.length; j += width) gaps.push((marks[j] as number) - (marks[j - 1] as number));
    }
    const elapsed = performance.now() - t0;
    return { perStepMedian: median(gaps), perStepP99: p99(gaps), runMedian: median(samples.map((s) => s.totalMs)), runsPerSecond: (reps * 1000) / elapsed };
  } finally {
    await host.close();
    rmSync(home, { recursive: true, force: true });
  }
}

export async function run(reps = Number(process.env.BENCH_REPS ?? 20)): Promise<string[]> {
  const lines = ['## runner overhead (no-op read steps, HTTP submit + SSE watch)', '| shape | db | step-to-step median ms | step-to-step p99 ms | run median ms (HTTP+SSE) | runs/s |', '|---|---|---|---|---|---|'];
  const results: Record<string, { file: Awaited<ReturnType<typeof measure>>; memory: Awaited<ReturnType<typeof measure>> }> = {};
  for (const [name, wf] of [['chain-40', chain], ['dag-8x8', dag]] as const) {
    const file = await measure('file', wf, reps);
    const memory = await measure('memory', wf, reps);
    results[name] = { file, memory };
    for (const [db, r] of [['sqlite file (durable)', file], ['in-memory', memory]] as const) {
      lines.push(`| ${name} | ${db} | ${fmt(r.perStepMedian)} | ${fmt(r.perStepP99)} | ${fmt(r.runMedian, 1)} | ${fmt(r.runsPerSecond, 1)} |`);
    }
  }
  lines.push('', 'durability cost (durable ÷ in-memory, run median):');
  for (const [name, r] of Object.entries(results)) lines.push(`- ${name}: ${fmt(r.file.runMedian / r.memory.runMedian, 2)}×`);
  return lines;
}
