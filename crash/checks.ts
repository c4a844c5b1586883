import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { type Api, type Frame, processesOf, recordStream, sleep } from './host';
import { checkParkedInput, continueParkedInput, retryUnanswered } from './inputs';
import { type Delivery, type DirectRun, type Drive, gateAnswerer, MARKS } from './workload';

/**
 * The crash invariants of docs/reliability.md, checked from the outside after a crash and a restart on the same
 * home: each returns the violations it found (empty: it held).
 */

const stable = (v: unknown): string => JSON.stringify(v, (_k, x) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x));

/** Every event a client received is in the replay with the same seq and payload; neither has a gap. */
export function compareReplay(run: DirectRun, replay: Frame[]): string[] {
  const out: string[] = [];
  const bySeq = new Map(replay.map((f) => [f.seq, f]));
  replay.forEach((f, i) => {
    if (f.seq !== i + 1) out.push(`run ${run.runId}: the replay has a gap (frame ${i + 1} has seq ${f.seq})`);
  });
  run.frames.forEach((f, i) => {
    if (f.seq !== i + 1) out.push(`run ${run.runId}: the live stream had a gap (frame ${i + 1} has seq ${f.seq})`);
    const r = bySeq.get(f.seq);
    if (!r) out.push(`run ${run.runId}: received seq ${f.seq} (${f.event}) is missing from the replay`);
    else if (r.event !== f.event || stable(r.data) !== stable(f.data)) out.push(`run ${run.runId}: seq ${f.seq} differs: received ${f.event} ${stable(f.data).slice(0, 200)}, replay ${r.event} ${stable(r.data).slice(0, 200)}`);
  });
  return out.slice(0, 5);
}

/** Processes of the home still alive `graceMs` after its host died. */
export async function survivors(home: string, graceMs = 3000): Promise<string[]> {
  let left = processesOf(home);
  for (let waited = 0; left.length > 0 && waited < graceMs; waited += 100) {
    await sleep(100);
    left = processesOf(home);
  }
  return left.map((p) => `process ${p.pid} (${p.cmd.slice(0, 120)}) survived its host`);
}

/** How many times each mark was written. */
export function markCounts(home: string): Map<string, number> {
  const counts = new Map<string, number>();
  const file = join(home, MARKS);
  if (!existsSync(file)) return counts;
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = line.trim();
    if (m) counts.set(m, (counts.get(m) ?? 0) + 1);
  }
  return counts;
}

/** Steps whose end (`done`) a client received before the crash. */
export function reportedDone(run: DirectRun): string[] {
  // a loop's body step is counted per iteration (`m` of iteration 1 is `m1`)
  return run.frames.filter((f) => f.event === 'step_complete' && f.data?.status === 'done').map((f) => `${f.data.stepId as string}${typeof f.data.iteration === 'number' ? f.data.iteration : ''}`);
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled', 'interrupted']);
/** A run waiting at a gate with nothing running is parked by a stop (its inbox item survives), not interrupted. */
const PARKED = new Set(['awaiting_plan_approval', 'awaiting_step_approval', 'awaiting_input']);

/** After the restart: the replay of each streamed run, and no run from before the crash still live. */
export async function checkRestart(api: Api, h: { url: string; token: string }, drive: Drive, restartedAt: string): Promise<{ violations: string[]; replays: Map<DirectRun, Frame[]> }> {
  const violations: string[] = [];
  const replays = new Map<DirectRun, Frame[]>();
  for (const run of drive.runs) {
    if (!run.runId) continue;
    const replay: Frame[] = [];
    // a run still live (parked at a gate) keeps its stream open: its replay ends at its last stored event
    const detail = await api('GET', `/api/agent/runs/${run.runId}`);
    const live = !TERMINAL.has(detail.body?.status);
    const lastSeq = live ? Math.max(0, ...((detail.body?.events ?? []) as Array<{ seq: number }>).map((e) => e.seq)) : undefined;
    await recordStream(h, run.runId, replay, undefined, undefined, lastSeq);
    replays.set(run, replay);
    violations.push(...compareReplay(run, replay));
  }
  const list = await api('GET', '/api/agent/runs?limit=100');
  for (const r of list.body.runs as Array<{ id: string; status: string; createdAt: string }>) {
    if (r.createdAt < restartedAt && !TERMINAL.has(r.status) && !PARKED.has(r.status)) violations.push(`run ${r.id} from before the crash is ${r.status} after the restart (expected interrupted, parked at its gate, or ended)`);
  }
  return { violations, replays };
}

/**
 * Resumes the streamed runs the crash interrupted (or answers the gate a parked one waits at),
 * answering their gates, until they end. An input run first sends again every answer the dying
 * host never answered (a client's retry). Returns the violations and each run's whole story
 * (the replay, then what followed the restart's answers).
 */
export async function resumeInterrupted(api: Api, h: { url: string; token: string }, replays: Map<DirectRun, Frame[]>, pick: () => number): Promise<{ violations: string[]; stories: Map<DirectRun, Frame[]> }> {
  const out: string[] = [];
  const stories = new Map<DirectRun, Frame[]>();
  await Promise.all(
    [...replays].map(async ([run, replay]) => {
      stories.set(run, replay);
      const last = replay[replay.length - 1];
      if (run.kind === 'input') {
        // parked at its input: checked as the restart left it, before any retry answers it
        const parkedInput = last?.event === 'input_requested';
        if (parkedInput) out.push(...(await checkParkedInput(api, run, last)));
        await retryUnanswered(api, run);
        if (parkedInput) {
          const after = await continueParkedInput(api, h, run, last, pick);
          stories.set(run, [...replay, ...after]);
          const end = after[after.length - 1];
          if (end?.event !== 'complete') out.push(`run ${run.runId}: its parked input answered after the restart, it ended ${end?.event ?? 'with no event'} (${JSON.stringify(end?.data ?? {}).slice(0, 200)})`);
          return;
        }
      }
      const parked = last?.event === 'plan_approval_requested' || last?.event === 'step_approval_requested';
      if (last?.event !== 'interrupted' && !parked) return;
      // a parked run goes on when its gate is answered; an interrupted one is resumed
      const r = parked ? await api('POST', `/api/agent/${run.runId}/approve`, {}) : await api('POST', `/api/agent/runs/${run.runId}/resume`, {});
      if (r.status !== 200) return void out.push(`run ${run.runId}: ${parked ? 'approve' : 'resume'} answered ${r.status} ${JSON.stringify(r.body).slice(0, 200)}`);
      const after: Frame[] = [];
      await recordStream(h, run.runId as string, after, gateAnswerer(api, run, pick, true), last.seq);
      stories.set(run, [...replay, ...after]);
      const end = after[after.length - 1];
      // a failing workflow's run fails again at its failing step
      const want = run.kind === 'fail' ? 'error' : 'complete';
      if (end?.event !== want) out.push(`run ${run.runId}: resumed run ended ${end?.event ?? 'with no event'} (${JSON.stringify(end?.data ?? {}).slice(0, 200)})`);
    }),
  );
  return { violations: out, stories };
}

/** A step whose end was reported ran exactly once; a completed run's steps each ran. */
export function checkMarks(home: string, drive: Drive, finalStatus: Map<string, string>): string[] {
  const counts = markCounts(home);
  const out: string[] = [];
  for (const run of drive.runs) {
    const done = new Set(reportedDone(run));
    for (const step of run.steps) {
      if (step === 'x1') continue;
      const n = counts.get(`${run.tag}-${step}`) ?? 0;
      if (done.has(step) && n !== 1) out.push(`run ${run.runId}: step ${step} was reported done before the crash and ran ${n} times`);
      if (run.runId && finalStatus.get(run.runId) === 'completed' && n < 1) out.push(`run ${run.runId}: completed, but step ${step} left no mark`);
    }
  }
  return out;
}

/** One task per webhook event id across the crash (every answer names the same task). */
export function checkDeliveries(deliveries: Delivery[], webhookTasks: Array<{ id: string }>): string[] {
  const out: string[] = [];
  const ids = new Set<string>();
  for (const d of deliveries) {
    for (const r of d.refusals) out.push(`event ${d.eventId}: a delivery was answered ${r}`);
    const tasks = new Set(d.answers.map((a) => a.taskId));
    if (tasks.size > 1) out.push(`event ${d.eventId} yielded ${tasks.size} tasks: ${[...tasks].join(', ')}`);
    // the first answer may be lost to the crash (the retry then says duplicate); never two originals
    if (d.answers.filter((a) => !a.duplicate).length > 1) out.push(`event ${d.eventId}: ${d.answers.filter((a) => !a.duplicate).length} answers said "not a duplicate"`);
    for (const t of tasks) ids.add(t);
  }
  const answered = deliveries.filter((d) => d.answers.length > 0).length;
  if (webhookTasks.length !== answered) out.push(`${webhookTasks.length} webhook tasks exist for ${answered} event ids (${deliveries.length} sent)`);
  for (const t of webhookTasks) if (!ids.has(t.id)) out.push(`webhook task ${t.id} belongs to no answered event id`);
  return out;
}

/** At most one run per schedule fire (one immediate occurrence per schedule here). */
export function checkSchedules(drive: Drive, tasks: Array<{ id: string; scheduleId?: string; runId?: string }>): string[] {
  const out: string[] = [];
  const bySchedule = new Map<string, number>();
  for (const t of tasks) if (t.scheduleId) bySchedule.set(t.scheduleId, (bySchedule.get(t.scheduleId) ?? 0) + 1);
  for (const [id, n] of bySchedule) if (n > 1) out.push(`schedule ${id}: one occurrence yielded ${n} tasks`);
  void drive;
  return out;
}
