import { type Api, type Frame, recordStream } from './host';
import { answerInput, type DirectRun, gateAnswerer, type InputAnswer } from './workload';

/**
 * The input-step invariants (SPEC §10, docs/reliability.md), checked from the outside after the
 * restart: a gate takes one answer (every other answer to it is refused 409, never taken too); an
 * answer reported taken is in the replay (`input_received`) once; a run parked at its input stays
 * `awaiting_input` with its inbox item across the restart and goes on when answered; the step
 * after the input runs with a value that was answered, once when its end was reported before the
 * crash (one whose end no client saw may run again on resume, like any step); an input whose
 * answer was received is never asked again (a resume takes the answer the run row kept).
 */

/** The restarted host's answer to each answer the dying host never answered: the same values, sent again (a client's retry). */
export async function retryUnanswered(api: Api, run: DirectRun): Promise<void> {
  const lost = run.answers.filter((a) => !a.after && a.status === undefined);
  for (const a of lost) {
    const again: InputAnswer = { ...a, status: undefined, code: undefined, after: true };
    run.answers.push(again);
    const path = a.via === 'run' ? `/api/agent/${run.runId}/input` : `/api/inbox/${encodeURIComponent(a.gateId)}`;
    const r = await api('POST', path, { values: { note: a.note } }).catch(() => undefined);
    again.status = r?.status;
    again.code = r?.body?.error?.code;
  }
}

/** A run whose replay ends at its input is parked there: still `awaiting_input`, its inbox item pending. */
export async function checkParkedInput(api: Api, run: DirectRun, last: Frame): Promise<string[]> {
  const out: string[] = [];
  const r = await api('GET', `/api/agent/runs/${run.runId}`);
  const status = r.body?.status ?? r.body?.run?.status;
  if (status !== 'awaiting_input') out.push(`run ${run.runId}: parked at its input (replay ends at input_requested), but its status is ${status} after the restart`);
  const inbox = await api('GET', '/api/inbox');
  const items = (inbox.body?.items ?? []) as Array<{ id: string; kind: string; runId: string }>;
  if (!items.some((i) => i.id === last.data?.gateId && i.kind === 'input' && i.runId === run.runId)) out.push(`run ${run.runId}: its pending input ${last.data?.gateId} is not in the inbox after the restart`);
  return out;
}

/** Answers a parked input after the restart (unless a retried answer already did) and records the run until it ends. */
export async function continueParkedInput(api: Api, h: { url: string; token: string }, run: DirectRun, last: Frame, pick: () => number): Promise<Frame[]> {
  const gateId = String(last.data?.gateId);
  if (!run.answers.some((a) => a.gateId === gateId && a.status === 200)) await answerInput(api, run, gateId, pick() < 0.5 ? 'run' : 'inbox', true);
  const after: Frame[] = [];
  await recordStream(h, run.runId as string, after, gateAnswerer(api, run, pick, true), last.seq);
  return after;
}

/** Every input run's answers against its replay (before the restart's answers) and the full story (after them). */
export function checkInputs(counts: Map<string, number>, runs: DirectRun[], stories: Map<DirectRun, Frame[]>, finalStatus: Map<string, string>): string[] {
  const out: string[] = [];
  for (const run of runs) {
    if (run.kind !== 'input' || !run.runId) continue;
    const story = stories.get(run) ?? [];
    const received = new Map<string, number>();
    for (const f of story) if (f.event === 'input_received') received.set(String(f.data?.gateId), (received.get(String(f.data?.gateId)) ?? 0) + 1);
    const gates = new Set(run.answers.map((a) => a.gateId));
    for (const gateId of gates) {
      const mine = run.answers.filter((a) => a.gateId === gateId);
      const taken = mine.filter((a) => a.status === 200);
      if (taken.length > 1) out.push(`run ${run.runId}: input ${gateId} took ${taken.length} answers (${taken.map((a) => `${a.note} via ${a.via}`).join(', ')})`);
      for (const a of mine) if (a.status !== undefined && a.status !== 200 && a.status !== 409) out.push(`run ${run.runId}: an answer to input ${gateId} via ${a.via} was answered ${a.status} ${a.code ?? ''}`);
      const n = received.get(gateId) ?? 0;
      if (n > 1) out.push(`run ${run.runId}: input ${gateId} was received ${n} times in the replay`);
      if (taken.length && n === 0) out.push(`run ${run.runId}: an answer to input ${gateId} was taken (200) but the replay has no input_received for it`);
    }
    // an answer once received is kept: a resume never asks that input again (a new input_requested)
    const firstReceived = story.findIndex((f) => f.event === 'input_received');
    if (firstReceived >= 0 && story.slice(firstReceived).some((f) => f.event === 'input_requested')) out.push(`run ${run.runId}: its input was asked again after an answer to it was received`);
    // the step after the input ran once, with a value that was answered
    const notes = [...counts].filter(([line]) => line.startsWith(`${run.tag}-n `));
    const ran = notes.reduce((n, [, c]) => n + c, 0);
    // a value taken (200), or sent to a host that died before answering (it may have been taken: its retry then says 409 settled)
    const answered = new Set(run.answers.filter((a) => a.status === 200 || (a.status === undefined && !a.after)).map((a) => a.note));
    // a step whose end no client saw may run again on resume (SPEC §13); one reported done, never
    const reported = run.frames.some((f) => f.event === 'step_complete' && f.data?.stepId === 's1' && f.data?.status === 'done');
    if (ran > 1 && reported) out.push(`run ${run.runId}: the step after the input was reported done before the crash and ran ${ran} times (${notes.map(([l]) => l).join(', ')})`);
    for (const [line] of notes) if (!answered.has(line.slice(`${run.tag}-n `.length))) out.push(`run ${run.runId}: the step after the input ran with "${line}", which no answer sent that was taken or left unanswered by the crash`);
    if (finalStatus.get(run.runId) === 'completed' && ran < 1) out.push(`run ${run.runId}: completed, but the step after the input never ran`);
  }
  return out;
}
