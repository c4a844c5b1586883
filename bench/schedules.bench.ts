import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHost, type Host } from '../packages/host/src/http/server';
import type { TaskSubmitter } from '../packages/host/src/tasks/task-submitter';
import type { Tool } from '../packages/host/src/tools/tool';
import { fmt, median, p99 } from './stats';

/**
 * Fire-to-start latency of schedules: from a schedule's boundary instant to (a) its background
 * task being submitted and (b) the first step of its workflow starting, idle and under load
 * (8 interactive 40-step runs kept going over HTTP the whole time). 120 interval schedules
 * (4 owners × 30) every 60 s, created 200 ms apart (so their boundaries are too: a burst larger
 * than the batch reservations is refused for capacity by design), watched for one period. The floor: a bare `setTimeout` armed for the same instants in the same process (how
 * late the event loop itself is).
 */

const OWNERS = 4;
const PER_OWNER = 30;
const PERIOD_S = 60;
/** Creations (so boundaries) are spread out: a burst beyond the batch reservations would be refused for capacity, by design. */
const SPACING_MS = 200;

function markTool(marks: Map<string, number>): Tool {
  return {
    name: 'mark',
    description: 'records when a run reached its first step',
    inputSchema: { type: 'object' },
    effect: 'read',
    source: 'builtin',
    id: 'builtin:mark',
    schemaRevision: '1',
    idempotent: true,
    available: true,
    invoke: async (_args, ctx) => {
      if (ctx.runId && !marks.has(ctx.runId)) marks.set(ctx.runId, Date.now());
      return null;
    },
  };
}

const noop: Tool = { ...markTool(new Map()), name: 'noop_bench', id: 'builtin:noop_bench', invoke: async () => null };

async function api(host: Host, token: string, method: string, path: string, body?: unknown): Promise<any> {
  const res = await fetch(`${host.url}${path}`, { method, headers: { 'x-fengyu-token': token, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  const json = await res.json();
  if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

interface Result {
  refused: number;
  floor: number[];
  submitted: number[];
  started: number[];
}

async function scenario(load: boolean): Promise<Result> {
  const home = mkdtempSync(join(tmpdir(), 'fengyu-bench-sched-'));
  const marks = new Map<string, number>();
  const host = await createHost({ home, port: 0, logLevel: 'silent', sandbox: 'off', bundledPluginDirs: [], writeHostFile: false, beforeDomains: (ctx) => ctx.catalog.register({ kind: 'builtin', list: async () => [markTool(marks), noop] }) });
  // finished tasks are kept only up to a cap, so their snapshots are collected as they finish
  const finished = new Map<string, { submittedAt: string; runId?: string }>();
  const tasks = (host.ctx as typeof host.ctx & { tasks?: TaskSubmitter }).tasks;
  if (!tasks) throw new Error('no task executor on this host');
  tasks.onFinished((t) => {
    if (t.scheduleId && !finished.has(t.scheduleId)) finished.set(t.scheduleId, { submittedAt: t.submittedAt, ...(t.runId ? { runId: t.runId } : {}) });
  });
  const tokens = [host.token];
  for (let i = 1; i < OWNERS; i += 1) tokens.push((await api(host, host.token, 'POST', '/api/owners', { name: `bench${i}` })).token);

  let loading = load;
  const loaders: Promise<void>[] = [];
  if (load) {
    const chain = { steps: Array.from({ length: 40 }, (_, i) => ({ id: `s${i}`, tool: 'noop_bench', ...(i ? { dependsOn: [`s${i - 1}`] } : {}) })) };
    for (let i = 0; i < 8; i += 1) {
      loaders.push(
        (async () => {
          while (loading) {
            const { runId } = await api(host, host.token, 'POST', '/api/agent/run', { workflow: chain, config: { planApproval: false, permissionMode: 'full-access' } });
            for (;;) {
              const r = await api(host, host.token, 'GET', `/api/agent/runs/${runId}`);
              if (['completed', 'failed', 'cancelled', 'interrupted'].includes(r.status)) break;
              await new Promise((res) => setTimeout(res, 20));
            }
          }
        })(),
      );
    }
  }

  const floor: number[] = [];
  const schedules: Array<{ token: string; id: string; createdAt: number }> = [];
  const workflows = new Map<string, string>();
  for (const token of tokens) {
    const wf = await api(host, token, 'POST', '/api/workflows', { name: 'mark', plan: { steps: [{ id: 'm', tool: 'mark' }] } });
    await api(host, token, 'POST', `/api/workflows/${wf.id}/publish`, { revision: wf.revision });
    workflows.set(token, wf.id);
  }
  for (let i = 0; i < PER_OWNER; i += 1) {
    for (const token of tokens) {
      await new Promise((r) => setTimeout(r, SPACING_MS));
      const s = await api(host, token, 'POST', '/api/agent/schedules', { workflowId: workflows.get(token), permissionMode: 'full-access', recurrence: { kind: 'interval', everySeconds: PERIOD_S } });
      const target = Date.parse(s.createdAt) + PERIOD_S * 1000;
      schedules.push({ token, id: s.id, createdAt: Date.parse(s.createdAt) });
      // the floor: a bare timer for the same instant, re-armed in ≤ 60 s steps like the loop
      const arm = () => {
        const wait = Math.min(60_000, target - Date.now());
        setTimeout(() => (Date.now() >= target ? floor.push(Date.now() - target) : arm()), Math.max(0, wait));
      };
      arm();
    }
  }
  let refused = 0;
  const last = Math.max(...schedules.map((s) => s.createdAt)) + PERIOD_S * 1000;
  // wait for every first fire and its first step
  for (;;) {
    await new Promise((r) => setTimeout(r, 500));
    if (Date.now() < last) continue;
    if (finished.size >= schedules.length) break;
    if (Date.now() > last + 20_000) {
      const views = await Promise.all(schedules.map((s) => api(host, s.token, 'GET', `/api/agent/schedules/${s.id}`)));
      refused = views.filter((v) => v.missedFires > 0).length;
      if (finished.size + refused >= schedules.length) break;
      throw new Error(`only ${finished.size}/${schedules.length} fired and finished, ${refused} refused`);
    }
  }
  loading = false;
  await Promise.all(loaders);

  const submitted: number[] = [];
  const started: number[] = [];
  for (const s of schedules) {
    const task = finished.get(s.id);
    if (!task) continue;
    const boundary = s.createdAt + PERIOD_S * 1000;
    submitted.push(Date.parse(task.submittedAt) - boundary);
    const mark = task.runId ? marks.get(task.runId) : undefined;
    if (mark !== undefined) started.push(mark - boundary);
  }
  await host.close();
  rmSync(home, { recursive: true, force: true });
  return { floor, submitted, started, refused };
}

export async function run(): Promise<string[]> {
  const lines = [
    `${OWNERS * PER_OWNER} interval schedules (${OWNERS} owners × ${PER_OWNER}), boundaries ${SPACING_MS} ms apart, one period of ${PERIOD_S} s; latency from the boundary instant, ms`,
    '| scenario | measure | median | p99 | ratio of medians to floor |',
    '|---|---|---|---|---|',
  ];
  for (const load of [false, true]) {
    const r = await scenario(load);
    const f = median(r.floor);
    const name = load ? 'under load (8 runs of 40 steps in a loop)' : 'idle';
    lines.push(`| ${name} | floor: bare setTimeout (n=${r.floor.length}) | ${fmt(f, 2)} | ${fmt(p99(r.floor), 2)} | 1.00 |`);
    lines.push(`| ${name} | fire → task submitted (n=${r.submitted.length}) | ${fmt(median(r.submitted), 2)} | ${fmt(p99(r.submitted), 2)} | ${fmt(median(r.submitted) / Math.max(f, 0.01), 1)} |`);
    lines.push(`| ${name} | fire → first step started (n=${r.started.length}) | ${fmt(median(r.started), 2)} | ${fmt(p99(r.started), 2)} | ${fmt(median(r.started) / Math.max(f, 0.01), 1)} |`);
    if (r.refused) lines.push(`| ${name} | refused for capacity | ${r.refused} | | |`);
  }
  return lines;
}
