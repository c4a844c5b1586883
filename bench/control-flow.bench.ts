import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { type ConditionCase, pickBranch, resolveValue } from '../packages/protocol/src/index';
import { chainOf, Client, loadAverage, ROOT, type RealHost, runWorkflow, startRealHost } from './real-host';
import { fmt, median } from './stats';

/**
 * Control flow on the real host (`bin/fengyu.mjs serve`, as `npm start` runs it), each figure next
 * to a floor measured in the same run (the goals are in bench/goals.json):
 * - a 1,000-item forEach whose body is one cheap built-in read step, at concurrency 1 and 8: the
 *   host's cost (CPU time) per iteration ÷ its cost per step of a 40-step chain of the same tool
 *   (goal ≤ 1.2×);
 * - a condition step's host time (CPU): a chain of 40 conditions after one tool step (goal
 *   ≤ 0.3 ms), beside the pure branch decision in-process (the floor no host can beat).
 * Wall times are printed beside them: on a shared machine they mostly measure waiting for a CPU.
 * Every shape is run interleaved with the others; a run's fixed cost is taken out by subtracting
 * the median of a 1-step run. Wall time is POST → `complete` over SSE; host CPU is the host
 * process' time on a CPU (from /proc, all its threads) over the same runs.
 */

const TOOL = 'task_capacity'; // a built-in read tool that answers from memory (the host figures' BUILTIN)

function loop(items: number, concurrency: number) {
  return { steps: [{ id: 'each', kind: 'forEach', items: Array.from({ length: items }, (_, i) => i), maxItems: items, concurrency, steps: [{ id: 'cap', tool: TOOL }] }] };
}

/** One tool step, then `n` conditions in a chain, each reading the branch the one before took. */
function conditions(n: number) {
  return {
    steps: [
      { id: 's0', tool: TOOL },
      ...Array.from({ length: n }, (_, i) => ({
        id: `c${i}`,
        kind: 'condition',
        dependsOn: [i ? `c${i - 1}` : 's0'],
        cases: [{ name: 'yes', when: { all: [i ? { left: `{{node.c${i - 1}.result.branch}}`, op: 'eq', right: 'yes' } : { left: '{{node.s0.result}}', op: 'exists' }] } }],
      })),
    ],
  };
}

/**
 * The host process' CPU time so far, ms: the sum over its threads of the time on a CPU in
 * /proc/<pid>/task/<tid>/schedstat (nanoseconds; /proc/<pid>/stat's ticks are 10 ms, too coarse
 * for one short run). A thread that ended between two reads takes its time with it (the host's
 * threads live as long as it does).
 */
function cpuMs(pid: number): number {
  let ns = 0;
  for (const tid of readdirSync(`/proc/${pid}/task`)) {
    try {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    } catch {
      // the thread ended while listing
    }
  }
  return ns / 1e6;
}

/** The floor of a condition: resolving both sides and picking the branch in-process, µs per decision. */
function branchFloorUs(reps: number): number {
  const cases: ConditionCase[] = [{ name: 'yes', when: { all: [{ left: '{{node.c0.result.branch}}', op: 'eq', right: 'yes' }] } }];
  const scope = { stepIds: ['c0', 'c1'], results: new Map<string, unknown>([['c0', { branch: 'yes' }]]), dependsOn: ['c0'], inputs: {} } as unknown as Parameters<typeof resolveValue>[1];
  let taken = 0;
  for (let i = 0; i < 2000; i++) taken += pickBranch(cases, (side) => resolveValue(side, scope)) === 'yes' ? 1 : 0;
  const t0 = performance.now();
  for (let i = 0; i < reps; i++) taken += pickBranch(cases, (side) => resolveValue(side, scope)) === 'yes' ? 1 : 0;
  const us = ((performance.now() - t0) * 1000) / reps;
  if (taken !== reps + 2000) throw new Error('the floor took the wrong branch');
  return us;
}

interface Shape {
  workflow: unknown;
  wall: number[];
  cpu: number[];
}

export async function run(opts: { quick?: boolean } = {}): Promise<{ lines: string[]; ratios: Record<string, number> }> {
  const quick = !!opts.quick;
  const reps = quick ? 3 : Number(process.env.BENCH_REPS ?? 10);
  const items = quick ? 200 : 1000;
  const lines = [`load before: ${loadAverage()}`];
  execFileSync(process.execPath, [join(ROOT, 'scripts/build-if-changed.mjs')], { cwd: ROOT, stdio: 'ignore' }); // what `npm start` builds first
  const home = mkdtempSync(join(tmpdir(), 'fengyu-bench-flow-'));
  let host: RealHost | undefined;
  try {
    host = await startRealHost(home);
    const c = new Client(host.url, host.token);
    const shapes: Record<string, Shape> = {
      single: { workflow: chainOf(TOOL, 1), wall: [], cpu: [] },
      chain: { workflow: chainOf(TOOL, 40), wall: [], cpu: [] },
      conditions: { workflow: conditions(40), wall: [], cpu: [] },
      loop1: { workflow: loop(items, 1), wall: [], cpu: [] },
      loop8: { workflow: loop(items, 8), wall: [], cpu: [] },
    };
    for (const s of Object.values(shapes)) await runWorkflow(c, s.workflow); // warm-up (JIT, statements)
    for (let i = 0; i < reps; i++) {
      for (const s of Object.values(shapes)) {
        const before = cpuMs(host.pid);
        const t = await runWorkflow(c, s.workflow);
        s.cpu.push(cpuMs(host.pid) - before);
        s.wall.push(t.totalMs);
      }
    }
    c.close();
    const m = (k: string, what: 'wall' | 'cpu') => median(shapes[k]?.[what] ?? []);
    // per unit of work: the run's median minus the 1-step run's median, over the units it added
    const per = (k: string, what: 'wall' | 'cpu', units: number) => (m(k, what) - m('single', what)) / units;
    const step = { wall: per('chain', 'wall', 39), cpu: per('chain', 'cpu', 39) };
    const iter1 = { wall: per('loop1', 'wall', items), cpu: per('loop1', 'cpu', items) };
    const iter8 = { wall: per('loop8', 'wall', items), cpu: per('loop8', 'cpu', items) };
    const cond = { wall: per('conditions', 'wall', 40), cpu: per('conditions', 'cpu', 40) };
    const floorUs = branchFloorUs(quick ? 20_000 : 200_000);

    lines.push('', `## control flow on the real host (\`bin/fengyu.mjs serve\`, SQLite file; ${reps} runs of each shape, interleaved, after one warm-up each)`, '');
    lines.push('| shape | run median ms (POST → `complete` over SSE) | host CPU per run, median ms |', '|---|---|---|');
    const label: Record<string, string> = {
      single: `1 step (${TOOL}): the fixed cost of a run, subtracted below`,
      chain: `40-step chain of ${TOOL}`,
      conditions: `1 step + 40 conditions in a chain (each reads the previous branch)`,
      loop1: `forEach over ${items} items, body: 1 ${TOOL} step, concurrency 1`,
      loop8: `forEach over ${items} items, body: 1 ${TOOL} step, concurrency 8`,
    };
    for (const k of Object.keys(shapes)) lines.push(`| ${label[k]} | ${fmt(m(k, 'wall'), 1)} | ${fmt(m(k, 'cpu'), 1)} |`);
    lines.push('', '| per unit of work (run median − 1-step run median) ÷ units | wall ms | host CPU ms | ratio to a chain step (wall / CPU) | goal |', '|---|---|---|---|---|');
    lines.push(`| a step of the 40-step chain (÷ 39) — the floor of the loop rows | ${fmt(step.wall, 3)} | ${fmt(step.cpu, 3)} | 1 / 1 | |`);
    lines.push(`| a forEach iteration, concurrency 1 (÷ ${items}) | ${fmt(iter1.wall, 3)} | ${fmt(iter1.cpu, 3)} | ${fmt(iter1.wall / step.wall, 2)} / ${fmt(iter1.cpu / step.cpu, 2)} | ≤ 1.2× |`);
    lines.push(`| a forEach iteration, concurrency 8 (÷ ${items}) | ${fmt(iter8.wall, 3)} | ${fmt(iter8.cpu, 3)} | ${fmt(iter8.wall / step.wall, 2)} / ${fmt(iter8.cpu / step.cpu, 2)} | ≤ 1.2× |`);
    lines.push(`| a condition step (÷ 40) | ${fmt(cond.wall, 3)} | ${fmt(cond.cpu, 3)} | ${fmt(cond.wall / step.wall, 2)} / ${fmt(cond.cpu / step.cpu, 2)} | ≤ 0.3 ms |`);
    lines.push(`| floor: the branch decision in-process (resolve both sides + pickBranch), no host | ${fmt(floorUs / 1000, 4)} | — | — | |`);
    lines.push('', `load after: ${loadAverage()}`);
    return {
      lines,
      ratios: {
        // the goals are on host cost (its CPU time); wall time on a shared machine is printed beside them
        foreach_iteration_c1_vs_chain_step: iter1.cpu / step.cpu,
        foreach_iteration_c8_vs_chain_step: iter8.cpu / step.cpu,
        condition_step_host_ms: cond.cpu,
        foreach_iteration_c1_vs_chain_step_wall: iter1.wall / step.wall,
        foreach_iteration_c8_vs_chain_step_wall: iter8.wall / step.wall,
        condition_step_wall_ms: cond.wall,
      },
    };
  } finally {
    await host?.stop();
    rmSync(home, { recursive: true, force: true });
  }
}
