import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { type Api, apiOf, type Frame, type HostProc, prng, REQUEST_TIMEOUT_MS, recordStream, startHost } from './host';

/**
 * The mixed workload of one trial, and the template home it starts from (workflows published, a
 * webhook trigger, an uploaded workbook: made once per campaign, copied per trial). Every command
 * step appends a mark naming its run and step to `marks.log` in the trial's home, so the
 * campaign counts from the outside how often each step really ran.
 */

export interface Template {
  chainId: string;
  hookId: string;
  /** A workflow whose second step fails, naming `errorId` as its error workflow. */
  failId: string;
  /** The error workflow (input `failedRun`): started once per failed run of `failId`. */
  errorId: string;
  triggerId: string;
  secret: string;
  fileId: string;
}

export const MARKS = 'marks.log';

const chainSchema = { type: 'object', required: ['tag'], properties: { tag: { type: 'string' } } };
const hookSchema = { type: 'object', required: ['text'], properties: { text: { type: 'string' } } };

/** A command step that appends `<tag>-<id>` to the marks file, then lingers a little (alive at a crash). */
function markStep(marks: string, tag: string, id: string, dependsOn: string[] = []) {
  return { id, title: `mark ${id}`, tool: 'execute_command', arguments: { command: `echo ${tag}-${id} >> ${marks}; sleep 0.15`, timeoutSeconds: 30 }, ...(dependsOn.length ? { dependsOn } : {}) };
}

/**
 * A forEach over three items, two at a time, then a step after it: each iteration marks
 * `<tag>-m<index>`, so an iteration reported done (step `m`, iteration i) is step `m<i>` here.
 */
export function loopPlan(marks: string, tag: string) {
  const body = { ...markStep(marks, tag, 'm'), arguments: { command: `echo ${tag}-m{{index}} >> ${marks}; sleep 0.15`, timeoutSeconds: 30 } };
  return { steps: [{ id: 'each', kind: 'forEach', items: ['a', 'b', 'c'], concurrency: 2, steps: [body] }, markStep(marks, tag, 's1', ['each'])] };
}

/**
 * An input step first (one required text field: asked at once, so crashes find it waiting or
 * being answered), then a mark that also writes the answered value (`<tag>-n <note>`): the
 * campaign sees which answer the step after the input ran with.
 */
export function inputPlan(marks: string, tag: string) {
  const ask = { id: 'ask', kind: 'input', title: `crash ${tag}`, form: { type: 'object', required: ['note'], properties: { note: { type: 'string', maxLength: 40 } } } };
  const after = { ...markStep(marks, tag, 's1', ['ask']), arguments: { command: `echo ${tag}-s1 >> ${marks}; echo ${tag}-n {{node.ask.result.note}} >> ${marks}; sleep 0.15`, timeoutSeconds: 30 } };
  return { steps: [ask, after] };
}

/** The steps the campaign counts marks of: a loop's body step once per item; an input step leaves none; a failing run's failing step is not counted. */
export function markedSteps(kind: DirectRun['kind'], ids: string[]): string[] {
  if (kind === 'fail') return ['s1'];
  return kind === 'loop' ? ['m0', 'm1', 'm2', 's1'] : ids.filter((id) => id !== 'ask');
}

/** A mark, then a step that marks and fails (exit 3): the run fails at `s2` and starts its error workflow. */
export function failPlan(marks: string, tag: string) {
  return { steps: [markStep(marks, tag, 's1'), { ...markStep(marks, tag, 's2', ['s1']), arguments: { command: `echo ${tag}-s2 >> ${marks}; exit 3`, timeoutSeconds: 30 } }] };
}

export function chainPlan(marks: string, tag: string, n: number) {
  return { steps: Array.from({ length: n }, (_, i) => markStep(marks, tag, `s${i + 1}`, i ? [`s${i}`] : [])) };
}

async function ok(r: Promise<{ status: number; body: any }>, what: string): Promise<any> {
  const res = await r;
  if (res.status >= 300) throw new Error(`${what}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

async function publish(api: Api, body: unknown): Promise<string> {
  const wf = await ok(api('POST', '/api/workflows', body), 'create workflow');
  await ok(api('POST', `/api/workflows/${wf.id}/publish`, { revision: wf.revision }), 'publish');
  return wf.id as string;
}

/** Builds the template home: the workflows, the trigger, the workbook. Marks go to `<home>/marks.log` of each trial: the path is a workflow input. */
export async function makeTemplate(entry: string, home: string, token: string): Promise<Template> {
  const h = await startHost(entry, home, token);
  try {
    const api = apiOf(h);
    const chainId = await publish(api, {
      name: 'crash chain',
      description: '',
      inputSchema: { ...chainSchema, required: ['tag', 'marks'], properties: { ...chainSchema.properties, marks: { type: 'string' } } },
      plan: { steps: [1, 2, 3].map((i) => ({ ...markStep('{{inputs.marks}}', '{{inputs.tag}}', `s${i}`, i > 1 ? [`s${i - 1}`] : []) })) },
    });
    const hookId = await publish(api, {
      name: 'crash hook',
      description: '',
      inputSchema: { ...hookSchema, required: ['text', 'marks'], properties: { ...hookSchema.properties, marks: { type: 'string' } } },
      plan: { steps: [{ id: 'h1', title: 'hook mark', tool: 'execute_command', arguments: { command: 'echo {{inputs.text}} >> {{inputs.marks}}' } }] },
    });
    const errorId = await publish(api, {
      name: 'crash on error',
      description: '',
      inputSchema: { type: 'object', required: ['failedRun'], properties: { failedRun: { type: 'object' } } },
      plan: { steps: [{ id: 'e1', title: 'note the failure', tool: 'execute_command', arguments: { command: 'echo failed {{inputs.failedRun.runId}}' } }] },
    });
    const failId = await publish(api, {
      name: 'crash failing',
      description: '',
      errorWorkflowId: errorId,
      inputSchema: { ...chainSchema, required: ['tag', 'marks'], properties: { ...chainSchema.properties, marks: { type: 'string' } } },
      plan: failPlan('{{inputs.marks}}', '{{inputs.tag}}'),
    });
    const created = await ok(api('POST', `/api/workflows/${hookId}/webhooks`, { permissionMode: 'full-access', name: 'crash' }), 'trigger');
    const wb = new ExcelJS.Workbook();
    const sheet = wb.addWorksheet('Data');
    sheet.addRow(['Region', 'Amount']);
    for (let i = 0; i < 20; i++) sheet.addRow([['North', 'South', 'East'][i % 3], i * 10]);
    const xlsx = join(home, 'crash.xlsx');
    await wb.xlsx.writeFile(xlsx);
    const form = new FormData();
    const { readFileSync } = await import('node:fs');
    form.append('file', new Blob([readFileSync(xlsx)]), 'crash.xlsx');
    const up = await fetch(`${h.url}/api/files`, { method: 'POST', headers: { 'x-fengyu-token': token }, body: form });
    if (up.status !== 201) throw new Error(`upload: ${up.status} ${await up.text()}`);
    const fileId = ((await up.json()) as { id: string }).id;
    return { chainId, hookId, failId, errorId, triggerId: created.trigger.id, secret: created.secret, fileId };
  } finally {
    h.proc.kill('SIGTERM');
    await h.exited;
  }
}

/** A direct run the campaign streamed. */
export interface DirectRun {
  tag: string;
  kind: 'chain' | 'plan-gate' | 'step-gates' | 'plugin' | 'loop' | 'input' | 'fail';
  steps: string[];
  runId?: string;
  frames: Frame[];
  /** An input run's answers, as sent and as answered (before and after the restart). */
  answers: InputAnswer[];
}

/** One answer sent to an input gate: through the run's input route or the inbox. */
export interface InputAnswer {
  gateId: string;
  note: string;
  via: 'run' | 'inbox';
  /** The HTTP status (undefined: no answer, the host died under it). */
  status?: number;
  code?: string;
  /** Sent to the restarted host. */
  after: boolean;
}

export interface Delivery {
  eventId: string;
  text: string;
  /** The answers received (202 bodies), in order. */
  answers: Array<{ taskId: string; deliveryId: string; duplicate: boolean }>;
  /** Other outcomes (status and error code) worth a violation. */
  refusals: string[];
}

export interface Drive {
  runs: DirectRun[];
  tasks: Array<{ tag: string; taskId?: string }>;
  schedules: Array<{ tag: string; scheduleId?: string }>;
  deliveries: Delivery[];
  /** Everything the workload started has settled. */
  settled: Promise<void>;
}

export function deliverOnce(h: { url: string }, t: Template, d: Delivery, marks: string): Promise<void> {
  return fetch(`${h.url}/api/workflow-hooks/${t.triggerId}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-fengyu-webhook-secret': t.secret, 'x-fengyu-event-id': d.eventId },
    body: JSON.stringify({ text: d.text, marks }),
    signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
  }).then(
    async (res) => {
      const body = (await res.json().catch(() => ({}))) as any;
      if (res.status === 202) d.answers.push(body);
      else if (res.status !== 429) d.refusals.push(`${res.status} ${body?.error?.code ?? ''}`);
    },
    () => undefined,
  );
}

/**
 * Sends one answer to an input gate and records its outcome (`answers` of the run): through the
 * run's input route or the inbox item (the gate's id), as `via` says.
 */
export function answerInput(api: Api, run: DirectRun, gateId: string, via: InputAnswer['via'], after: boolean): Promise<void> {
  const a: InputAnswer = { gateId, note: `v${run.answers.length}${after ? 'r' : ''}`, via, after };
  run.answers.push(a);
  const path = via === 'run' ? `/api/agent/${run.runId}/input` : `/api/inbox/${encodeURIComponent(gateId)}`;
  return api('POST', path, { values: { note: a.note } }).then(
    (r) => {
      a.status = r.status;
      a.code = r.body?.error?.code;
    },
    () => undefined,
  );
}

/**
 * Answers every gate a run's stream asks for: approvals with an empty approve body; an input
 * with its values through the run's route or the inbox (`pick`), and sometimes twice at once
 * (a double click: exactly one may be taken).
 */
export function gateAnswerer(api: Api, run: DirectRun, pick: () => number = () => 0, after = false) {
  return (f: Frame) => {
    const id = run.runId;
    if (!id) return;
    if (f.event === 'plan_approval_requested' || f.event === 'step_approval_requested') void api('POST', `/api/agent/${id}/approve`, {}).catch(() => undefined);
    if (f.event === 'input_requested') {
      const gateId = String(f.data?.gateId);
      void answerInput(api, run, gateId, pick() < 0.5 ? 'run' : 'inbox', after);
      if (pick() < 0.4) void answerInput(api, run, gateId, pick() < 0.5 ? 'run' : 'inbox', after);
    }
  };
}

/** Starts the trial's workload on a live host; `pick` (the trial's PRNG) varies its mix. */
export function drive(h: HostProc, t: Template, home: string, trial: string, pick: () => number): Drive {
  const api = apiOf(h);
  const marks = join(home, MARKS);
  writeFileSync(marks, '', { flag: 'a' });
  const runs: DirectRun[] = [];
  const work: Promise<unknown>[] = [];
  const kinds: DirectRun['kind'][] = ['chain', 'chain', 'plan-gate', 'step-gates', 'plugin', 'loop', 'input', 'fail'];
  kinds.forEach((kind, i) => {
    if (pick() < 0.15) return;
    const tag = `${trial}r${i}`;
    const n = kind === 'plugin' ? 1 : kind === 'step-gates' ? 2 : 1 + Math.floor(pick() * 3);
    const plan =
      kind === 'plugin'
        ? { steps: [{ id: 'x1', title: 'analyze', tool: 'excel_analyze', arguments: { filePath: '@file:workbook' } }, markStep(marks, tag, 's1', ['x1'])] }
        : kind === 'loop'
          ? loopPlan(marks, tag)
          : kind === 'input'
            ? inputPlan(marks, tag)
            : kind === 'fail'
              ? failPlan(marks, tag)
              : chainPlan(marks, tag, n);
    const run: DirectRun = { tag, kind, steps: markedSteps(kind, plan.steps.map((s) => s.id)), frames: [], answers: [] };
    // the answers' own PRNG, drawn now: the trial's draws stay in the same order whatever the timing
    const answerPick = prng(Math.floor(pick() * 2 ** 32));
    runs.push(run);
    const config = { permissionMode: 'full-access', planApproval: kind === 'plan-gate', stepApproval: kind === 'step-gates' };
    const body = { goal: `crash ${tag}`, workflow: plan, config, ...(kind === 'plugin' ? { files: [{ name: 'workbook', refs: [t.fileId] }] } : {}) };
    // the failing run is its published workflow's run (an error workflow belongs to a workflow)
    const start = kind === 'fail' ? api('POST', `/api/workflows/${t.failId}/run`, { inputs: { tag, marks }, config: { permissionMode: 'full-access' } }) : api('POST', '/api/agent/run', body);
    work.push(
      start
        .then(async (r) => {
          if (r.status !== 200) throw new Error(`run ${kind}: ${r.status} ${JSON.stringify(r.body)}`);
          run.runId = r.body.runId;
          await recordStream(h, run.runId as string, run.frames, gateAnswerer(api, run, answerPick));
        })
        // a request the dying host never answered is the crash itself, not a violation
        .catch((e: Error) => (e instanceof TypeError || (h.proc.exitCode ?? h.proc.signalCode) !== null ? undefined : Promise.reject(e))),
    );
  });
  const tasks: Drive['tasks'] = [];
  const nTasks = Math.floor(pick() * 3);
  for (let i = 0; i < nTasks; i++) {
    const entry: Drive['tasks'][number] = { tag: `${trial}t${i}` };
    tasks.push(entry);
    work.push(
      api('POST', '/api/agent/tasks', { workflowId: t.chainId, inputs: { tag: entry.tag, marks }, permissionMode: 'full-access' }).then(
        (r) => {
          if (r.status === 202) entry.taskId = r.body.id;
        },
        () => undefined,
      ),
    );
  }
  const schedules: Drive['schedules'] = [];
  if (pick() < 0.6) {
    const entry: Drive['schedules'][number] = { tag: `${trial}c0` };
    schedules.push(entry);
    const time = new Date(Date.now() + 12 * 3600_000).toISOString().slice(11, 16);
    work.push(
      api('POST', '/api/agent/schedules', { workflowId: t.chainId, inputs: { tag: entry.tag, marks }, permissionMode: 'full-access', runImmediately: true, recurrence: { kind: 'daily', time, timeZone: 'UTC' } }).then(
        (r) => {
          if (r.status === 201) entry.scheduleId = r.body.id;
        },
        () => undefined,
      ),
    );
  }
  const deliveries: Delivery[] = [];
  const nHooks = 1 + Math.floor(pick() * 3);
  for (let i = 0; i < nHooks; i++) {
    const d: Delivery = { eventId: `${trial}-e${i}`, text: `${trial}h${i}`, answers: [], refusals: [] };
    deliveries.push(d);
    // a sender that retries at once (a duplicate while the first may still be in flight)
    work.push(deliverOnce(h, t, d, marks).then(() => (pick() < 0.5 ? deliverOnce(h, t, d, marks) : undefined)));
  }
  const settled = Promise.all(work).then(async () => {
    // the background work: until no task is queued or running
    for (let i = 0; i < 200 && h.proc.exitCode === null && h.proc.signalCode === null; i++) {
      const list = await api('GET', '/api/agent/tasks?limit=100').catch(() => undefined);
      if (!list || list.status !== 200) return;
      if (!list.body.items.some((x: { state: string }) => x.state === 'queued' || x.state === 'running')) return;
      await new Promise((r) => setTimeout(r, 100));
    }
  });
  return { runs, tasks, schedules, deliveries, settled };
}
