import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import cliProgress from 'cli-progress';
import { EventSource } from 'eventsource';
import { call, connectHost, type HostHandle } from './host-client';
import { newProgressState, planLines, progressOf } from './run-progress';
import { answerHint, askValues, fieldLine, formFields } from './input-prompt';

/**
 * `fengyu run <workflow.json>`: a headless run with a live progress bar of steps, asking at
 * every gate (or approving all with --yes); skipped steps and loop progress as run-progress.ts
 * says; an input step's form is asked at a terminal, or its `fengyu answer` command shown. Exit
 * code 0 only when the run completed.
 */

interface Opts {
  inputs?: string;
  yes?: boolean;
  home?: string;
  mode?: string;
}

export function buildRequest(fileText: string, opts: Opts): Record<string, unknown> {
  const doc = JSON.parse(fileText) as Record<string, unknown>;
  const body: Record<string, unknown> = Array.isArray(doc.steps) ? { goal: doc.goal, workflow: doc } : { ...doc };
  if (opts.inputs) body.inputs = JSON.parse(opts.inputs);
  if (opts.mode) body.config = { ...((body.config as object) ?? {}), permissionMode: opts.mode };
  return body;
}

/**
 * Answers come from one line reader for the whole run, so answers piped on stdin
 * (`printf 'y\ny\n' | fengyu run …`) are not lost between questions.
 */
function answers() {
  let rl: ReturnType<typeof createInterface> | undefined;
  const queued: string[] = [];
  const waiting: Array<(line: string | undefined) => void> = [];
  let closed = false;
  const open = () => {
    if (rl) return;
    rl = createInterface({ input: process.stdin, terminal: false });
    rl.on('line', (line) => (waiting.length ? waiting.shift()?.(line) : queued.push(line)));
    rl.on('close', () => {
      closed = true;
      for (const w of waiting.splice(0)) w(undefined);
    });
  };
  return {
    async ask(question: string): Promise<boolean> {
      open();
      process.stderr.write(`${question} [y/N] `);
      const line = queued.length ? queued.shift() : closed ? undefined : await new Promise<string | undefined>((r) => waiting.push(r));
      const answer = (line ?? '').trim().toLowerCase();
      return answer === 'y' || answer === 'yes';
    },
    /** One line typed after `question` (undefined once stdin ends). */
    async line(question: string): Promise<string | undefined> {
      open();
      process.stderr.write(question);
      return queued.length ? queued.shift() : closed ? undefined : new Promise<string | undefined>((r) => waiting.push(r));
    },
    close: () => rl?.close(),
  };
}

function follow(h: HostHandle, runId: string, opts: Opts): Promise<string> {
  const input = answers();
  const ask = input.ask;
  return new Promise((resolve) => {
    const es = new EventSource(`${h.url}/api/agent/stream?runId=${runId}&token=${encodeURIComponent(h.token)}`);
    const bar = new cliProgress.SingleBar({ format: ' {bar} {value}/{total} steps | {status}', stream: process.stderr, noTTYOutput: true, notTTYSchedule: 1000 }, cliProgress.Presets.shades_classic);
    let total = 0;
    let done = 0;
    const log = (line: string) => process.stderr.write(`${line}\n`);
    const on = (type: string, fn: (d: any) => void | Promise<void>) => es.addEventListener(type, (m: MessageEvent) => void fn(JSON.parse(m.data)));
    const finish = (status: string) => {
      input.close();
      bar.stop();
      es.close();
      resolve(status);
    };
    const gate = async (what: string) => {
      bar.stop();
      const ok = opts.yes || (await ask(what));
      if (ok) await call(h, 'POST', `/api/agent/${runId}/approve`);
      else await call(h, 'POST', `/api/agent/${runId}/cancel`);
      if (ok) bar.start(total, done, { status: 'running' });
    };
    on('plan_ready', (d) => {
      total = d.plan.steps.length;
      bar.start(total, done, { status: 'planned' });
    });
    on('plan_approval_requested', async (d) => {
      total = d.plan.steps.length;
      log(`Plan (${total} steps):`);
      for (const line of planLines(d.plan.steps)) log(line);
      await gate('Approve this plan?');
    });
    on('step_approval_requested', async (d) => gate(`Step "${d.stepId}" (${d.tool ?? 'model'}, ${d.effect ?? ''}) needs approval: ${d.reason}. Approve?`));
    // an input step: asked field by field at a terminal, else how to answer it elsewhere
    on('input_requested', async (d) => {
      bar.stop();
      log(`Step "${d.stepId}" asks: ${d.title} (until ${d.expiresAt})`);
      for (const f of formFields(d.form)) log(`  - ${fieldLine(f.name, f.field, f.required)}`);
      const values = process.stdin.isTTY ? await askValues(d.form, input.line) : undefined;
      if (!values) {
        log(answerHint(d.gateId, d.form));
        return;
      }
      for (let next: Record<string, unknown> | undefined = values; next; next = await askValues(d.form, input.line)) {
        try {
          await call(h, 'POST', `/api/agent/${runId}/input`, { values: next });
          bar.start(total, done, { status: 'running' });
          return;
        } catch (err) {
          log(err instanceof Error ? err.message : String(err));
        }
      }
      // stdin ended before the values fit
      log(answerHint(d.gateId, d.form));
    });
    const progress = newProgressState();
    for (const type of ['step_start', 'step_complete', 'loop_progress']) {
      on(type, (d) => {
        const u = progressOf(type, d, progress);
        if (u.advance) done += 1;
        if (u.status !== undefined) bar.update(done, { status: u.status });
        for (const line of u.lines) log(line);
      });
    }
    on('complete', (d) => {
      bar.update(total, { status: 'completed' });
      finish('completed');
      log(`\n${d.summary}`);
      process.stdout.write(`${JSON.stringify(d.result, null, 2)}\n`);
    });
    on('error', (d) => {
      finish('failed');
      log(`\nRun failed: ${d.message}`);
    });
    on('cancelled', () => {
      finish('cancelled');
      log('\nRun cancelled.');
    });
    on('interrupted', () => finish('interrupted'));
  });
}

export async function runCommand(file: string, opts: Opts): Promise<number> {
  let h: HostHandle | undefined;
  try {
    const body = buildRequest(readFileSync(file, 'utf8'), opts);
    h = await connectHost(opts.home);
    const { runId } = await call<{ runId: string }>(h, 'POST', '/api/agent/run', body);
    process.stderr.write(`Run ${runId}\n`);
    const status = await follow(h, runId, opts);
    return status === 'completed' ? 0 : 1;
  } catch (err) {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    return 2;
  } finally {
    await h?.close();
  }
}
