import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { appendFileSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { CRASH_POINTS, type CrashPointName } from '../packages/host/src/config/crash-points';
import { checkDeliveries, checkMarks, markCounts, checkRestart, checkSchedules, resumeInterrupted, survivors } from './checks';
import { awaitErrorWorkflows, checkErrorWorkflows } from './error-workflows';
import { checkInputs } from './inputs';
import { apiOf, prng, ROOT, sleep, snapshotHost, startHost } from './host';
import { deliverOnce, drive, makeTemplate, MARKS, type Template } from './workload';

/**
 * The crash campaign (docs/reliability.md):
 *   npm run crash-campaign -- --trials N [--points a,b] [--seed S] [--parallel P] [--trial K] [--keep] [--until HH:MM]
 * Each trial copies a prepared home, starts a real host with FENGYU_CRASH_AT=<point>:<n> (point
 * and pass drawn from the seeded PRNG), drives the mixed workload until the host kills itself
 * (or, when the pass is never reached, kills it from outside), checks that none of its
 * processes survives, restarts it on the same home and checks every invariant from the outside.
 * One line per point, then `N passed, N failed`; a failing trial keeps its home and logs and
 * says how to replay it. Exit code 1 on any violation.
 */

/** How many times the workload passes each point at least (the pass is drawn from 1..this). */
const PASSES: Record<CrashPointName, number> = {
  'run-event-append': 40,
  'step-commit': 8,
  'run-finish': 4,
  'task-admit': 3,
  'task-start': 3,
  'schedule-due': 1,
  'schedule-claim': 1,
  'schedule-submit': 1,
  'webhook-claim': 2,
  'webhook-commit': 2,
  'plugin-call': 1,
  'gate-answer': 3,
  'command-running': 6,
  'error-workflow-due': 1,
  'error-workflow-submit': 1,
};

interface Options {
  trials: number;
  points: CrashPointName[];
  seed: number;
  parallel: number;
  only?: number;
  keep: boolean;
  /** No trial starts after this time (ISO or HH:MM UTC): the campaign reports the trials that ran. */
  until?: number;
}

function parseArgs(argv: string[]): Options {
  const o: Options = { trials: 10, points: [...CRASH_POINTS], seed: Date.now() % 1_000_000, parallel: 1, keep: false };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const v = () => argv[++i] ?? '';
    if (a === '--trials') o.trials = Number(v());
    else if (a === '--seed') o.seed = Number(v());
    else if (a === '--parallel') o.parallel = Math.max(1, Number(v()));
    else if (a === '--trial') o.only = Number(v());
    else if (a === '--keep') o.keep = true;
    else if (a === '--until') {
      const text = v();
      const at = /^\d\d:\d\d$/.test(text) ? Date.parse(`${new Date().toISOString().slice(0, 10)}T${text}:00Z`) : Date.parse(text);
      if (!Number.isFinite(at)) throw new Error(`--until needs HH:MM (UTC) or an ISO time, got "${text}"`);
      o.until = at;
    }
    else if (a === '--points') {
      const names = v().split(',').filter(Boolean);
      for (const n of names) if (!(CRASH_POINTS as readonly string[]).includes(n)) throw new Error(`unknown crash point "${n}": the points are ${CRASH_POINTS.join(', ')}`);
      o.points = names as CrashPointName[];
    } else throw new Error(`unknown argument ${a}`);
  }
  if (!Number.isInteger(o.trials) || o.trials < 1) throw new Error('--trials needs a positive integer');
  return o;
}

interface TrialResult {
  index: number;
  point: CrashPointName;
  pass: number;
  /** The host died at its crash point (not killed from outside). */
  reached: boolean;
  violations: string[];
  ms: number;
  dir: string;
}

async function trial(o: Options, entry: string, t: Template, template: string, base: string, index: number, token: string): Promise<TrialResult> {
  const t0 = performance.now();
  const pick = prng(o.seed * 1000 + index);
  const point = o.points[Math.floor(pick() * o.points.length)] as CrashPointName;
  const pass = 1 + Math.floor(pick() * PASSES[point]);
  const dir = join(base, `trial-${index}`);
  const home = join(dir, 'home');
  mkdirSync(dir, { recursive: true });
  cpSync(template, home, { recursive: true });
  rmSync(join(home, 'host.json'), { force: true });
  const log = (name: string) => (chunk: string) => appendFileSync(join(dir, name), chunk);
  const violations: string[] = [];
  const phases: Record<string, number> = {};
  let mark = performance.now();
  const phase = (name: string) => {
    const now = performance.now();
    phases[name] = Math.round(now - mark);
    mark = now;
  };
  let reached = false;
  const a = await startHost(entry, home, token, `${point}:${pass}`, log('host-a.log'));
  phase('start-a');
  const d = drive(a, t, home, `k${index}x`, pick);
  const died = a.exited.then(() => 'died' as const);
  const outcome = await Promise.race([died, d.settled.then(() => 'settled' as const), sleep(30_000).then(() => 'timeout' as const)]).catch((e: Error) => {
    violations.push(`workload: ${e.message}`);
    return 'error' as const;
  });
  // the streams may end (the socket closed) a moment before the exit is seen
  if (outcome !== 'died' && outcome !== 'timeout') await Promise.race([a.exited, sleep(1000)]);
  if (a.proc.exitCode !== null || a.proc.signalCode !== null) {
    const how = await a.exited;
    reached = how.signal === 'SIGKILL';
    if (!reached) violations.push(`host exited ${how.code ?? how.signal} instead of being killed at ${point}`);
  } else {
    // the pass was not reached in this trial's workload: kill it now, from outside, all the same
    a.proc.kill('SIGKILL');
    await a.exited;
  }
  phase('workload');
  violations.push(...(await survivors(home)));
  phase('survivors');
  // let the client side see its broken connections end
  await Promise.race([d.settled.catch(() => undefined), sleep(2000)]);
  phase('settle');
  const restartedAt = new Date().toISOString();
  const b = await startHost(entry, home, token, undefined, log('host-b.log'));
  phase('start-b');
  try {
    const api = apiOf(b);
    const marks = join(home, MARKS);
    // the sender retries every delivery it got no answer for, with the same event id
    for (const del of d.deliveries) {
      for (let i = 0; i < 20 && del.answers.length === 0 && del.refusals.length === 0; i++) {
        await deliverOnce(b, t, del, marks);
        if (del.answers.length === 0) await sleep(200);
      }
    }
    phase('retries');
    const restart = await checkRestart(api, b, d, restartedAt);
    violations.push(...restart.violations);
    phase('replay');
    const resumed = await resumeInterrupted(api, b, restart.replays, prng(o.seed * 1000 + index + 500_000));
    violations.push(...resumed.violations);
    phase('resume');
    await awaitErrorWorkflows(api, d.runs);
    let tasks: Array<{ id: string; kind: string; state: string; workflowId: string; scheduleId?: string; runId?: string }> = [];
    for (let i = 0; i < 150; i++) {
      tasks = (await api('GET', '/api/agent/tasks?limit=100')).body.items;
      if (!tasks.some((x) => x.state === 'queued' || x.state === 'running')) break;
      await sleep(200);
    }
    phase('tasks');
    const runs = (await api('GET', '/api/agent/runs?limit=100')).body.runs as Array<{ id: string; status: string }>;
    const status = new Map(runs.map((r) => [r.id, r.status]));
    for (const r of runs) if (r.status === 'running' || r.status === 'planning') violations.push(`run ${r.id} is still ${r.status} once everything settled`);
    violations.push(...checkMarks(home, d, status));
    violations.push(...checkInputs(markCounts(home), d.runs, resumed.stories, status));
    violations.push(...checkDeliveries(d.deliveries, tasks.filter((x) => x.kind === 'workflow-webhook')));
    violations.push(...checkSchedules(d, tasks));
    violations.push(...(await checkErrorWorkflows(api, d.runs, tasks, t.errorId)));
  } catch (e) {
    violations.push(`after the restart: ${(e as Error).message}`);
  } finally {
    // the restarted host is killed too (its clean stop is tested elsewhere): its processes must not survive it either
    b.proc.kill('SIGKILL');
    await b.exited;
    violations.push(...(await survivors(home)));
    phase('stop-b');
  }
  writeFileSync(join(dir, 'trial.json'), JSON.stringify({ index, seed: o.seed, point, pass, reached, violations, phases, runs: d.runs, tasks: d.tasks, schedules: d.schedules, deliveries: d.deliveries }, null, 1));
  if (violations.length === 0 && !o.keep) rmSync(dir, { recursive: true, force: true });
  // a slow trial says where its time went (the record's outliers), every trial with CRASH_DEBUG
  if (process.env.CRASH_DEBUG || performance.now() - t0 > 60_000) process.stdout.write(`    phases ${JSON.stringify(phases)}\n`);
  return { index, point, pass, reached, violations, ms: performance.now() - t0, dir };
}

/** The compiled host is built when it is not current (a trial then starts in ≈ 1 s instead of loading TypeScript). */
async function ensureBuilt(): Promise<void> {
  const { hostStamp } = (await import(pathToFileURL(join(ROOT, 'scripts/host-stamp.mjs')).href)) as { hostStamp: () => string };
  const stampFile = join(ROOT, 'dist/host/stamp');
  if (existsSync(stampFile) && readFileSync(stampFile, 'utf8') === hostStamp()) return;
  process.stdout.write('building the host (dist/host) …\n');
  execFileSync(process.execPath, [join(ROOT, 'scripts/build-host.mjs')], { stdio: 'inherit' });
}

/**
 * CPU seconds of this process and its reaped children (the hosts, and what they reaped) from
 * /proc/self/stat: a campaign's cost apart from the machine's load (the wall time on a 2-core
 * machine that runs nothing else is about this over 2, at --parallel 2).
 */
function cpuSeconds(): number {
  const stat = readFileSync('/proc/self/stat', 'utf8');
  const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // fields 14–17 of proc(5): utime, stime, cutime, cstime (here from index 11), in clock ticks of 1/100 s
  return f.slice(11, 15).reduce((n, x) => n + Number(x), 0) / 100;
}

async function main(): Promise<void> {
  const started = performance.now();
  const o = parseArgs(process.argv.slice(2));
  await ensureBuilt();
  const base = mkdtempSync(join(tmpdir(), 'fengyu-crash-'));
  const token = randomBytes(24).toString('hex');
  const template = join(base, 'template');
  const entry = snapshotHost(join(base, 'host'));
  const t = await makeTemplate(entry, template, token);
  writeFileSync(join(base, 'template.json'), JSON.stringify({ ...t, token }));
  const indexes = o.only !== undefined ? [o.only] : Array.from({ length: o.trials }, (_, i) => i);
  process.stdout.write(`crash campaign: ${indexes.length} trial(s), seed ${o.seed}, points ${o.points.length}, parallel ${o.parallel}, in ${base}\n`);
  const results: TrialResult[] = [];
  let next = 0;
  const worker = async () => {
    while (next < indexes.length && (o.until === undefined || Date.now() < o.until)) {
      const index = indexes[next++] as number;
      let r: TrialResult;
      try {
        r = await trial(o, entry, t, template, base, index, token);
      } catch (e) {
        r = { index, point: 'run-event-append', pass: 0, reached: false, violations: [`trial crashed: ${(e as Error).stack ?? e}`], ms: 0, dir: join(base, `trial-${index}`) };
      }
      results.push(r);
      const tag = r.violations.length ? 'FAIL' : 'ok';
      process.stdout.write(`trial ${r.index}: ${r.point}:${r.pass} ${r.reached ? 'crashed' : 'not reached (killed from outside)'} ${tag} ${(r.ms / 1000).toFixed(1)} s\n`);
      for (const v of r.violations) process.stdout.write(`    ${v}\n`);
      if (r.violations.length) process.stdout.write(`    kept: ${r.dir}\n    replay: npm run crash-campaign -- --seed ${o.seed} --trial ${r.index}${o.points.length < CRASH_POINTS.length ? ` --points ${o.points.join(',')}` : ''}\n`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(o.parallel, indexes.length) }, worker));
  process.stdout.write('\npoint                 trials  crashed  violations\n');
  for (const p of o.points) {
    const mine = results.filter((r) => r.point === p);
    process.stdout.write(`${p.padEnd(22)}${String(mine.length).padStart(6)}${String(mine.filter((r) => r.reached).length).padStart(9)}${String(mine.reduce((n, r) => n + r.violations.length, 0)).padStart(12)}\n`);
  }
  const failed = results.filter((r) => r.violations.length > 0).length;
  const ms = results.map((r) => r.ms).sort((x, y) => x - y);
  process.stdout.write(`trial time: median ${((ms[Math.floor(ms.length / 2)] ?? 0) / 1000).toFixed(1)} s, max ${((ms[ms.length - 1] ?? 0) / 1000).toFixed(1)} s\n`);
  process.stdout.write(`wall time ${((performance.now() - started) / 1000).toFixed(0)} s, CPU time ${cpuSeconds().toFixed(0)} s (this process and the hosts it started and reaped)\n`);
  if (results.length < indexes.length) process.stdout.write(`stopped at --until: ${results.length} of ${indexes.length} trials ran\n`);
  process.stdout.write(`${results.length - failed} passed, ${failed} failed\n`);
  if (failed === 0 && !o.keep) rmSync(base, { recursive: true, force: true });
  process.exit(failed ? 1 : 0);
}

await main();
