import { describe, expect, it } from 'vitest';
import type { Frame } from './host';
import { checkInputs } from './inputs';
import type { DirectRun, InputAnswer } from './workload';

// The campaign's input-step checker must fail on each broken promise (a checker that cannot fail proves nothing).

const gate = 'g1';
const frame = (seq: number, event: string, data: Record<string, unknown> = {}): Frame => ({ seq, event, data });
const answer = (note: string, status: number | undefined, extra: Partial<InputAnswer> = {}): InputAnswer => ({ gateId: gate, note, via: 'run', after: false, ...(status !== undefined ? { status } : {}), ...extra });

function scenario(answers: InputAnswer[], marks: string[], story: Frame[], status = 'completed', frames: Frame[] = []) {
  const run: DirectRun = { tag: 'k1r6', kind: 'input', steps: ['s1'], runId: 'run1', frames, answers };
  const counts = new Map<string, number>();
  for (const m of marks) counts.set(m, (counts.get(m) ?? 0) + 1);
  return checkInputs(counts, [run], new Map([[run, story]]), new Map([['run1', status]]));
}

const asked = [frame(1, 'run_created'), frame(2, 'input_requested', { gateId: gate })];
const received = [...asked, frame(3, 'input_received', { gateId: gate, outcome: 'answered' })];

describe('crash campaign: input-step invariants', () => {
  it('holds for one answer taken, a double click refused 409, and the step after it run once with the taken value', () => {
    expect(scenario([answer('v0', 200), answer('v1', 409, { via: 'inbox' })], ['k1r6-s1', 'k1r6-n v0'], received)).toEqual([]);
  });

  it('holds for an answer the dying host never answered, retried after the restart and taken then', () => {
    expect(scenario([answer('v0', undefined), answer('v0', 200, { after: true })], ['k1r6-s1', 'k1r6-n v0'], received)).toEqual([]);
  });

  it('holds for an answer taken by a host that died before replying (its retry is refused 409 settled) and the step after it run with that value', () => {
    expect(scenario([answer('v0', undefined, { via: 'inbox' }), answer('v0', 409, { via: 'inbox', after: true })], ['k1r6-s1', 'k1r6-n v0'], received)).toEqual([]);
  });

  it('flags a gate that took two answers', () => {
    expect(scenario([answer('v0', 200), answer('v1', 200)], ['k1r6-s1', 'k1r6-n v0'], received).join('\n')).toMatch(/took 2 answers/);
  });

  it('flags an answer refused with anything but 409', () => {
    expect(scenario([answer('v0', 200), answer('v1', 500)], ['k1r6-s1', 'k1r6-n v0'], received).join('\n')).toMatch(/answered 500/);
  });

  it('flags a taken answer missing from the replay, and one received twice', () => {
    expect(scenario([answer('v0', 200)], ['k1r6-s1', 'k1r6-n v0'], asked).join('\n')).toMatch(/no input_received/);
    expect(scenario([answer('v0', 200)], ['k1r6-s1', 'k1r6-n v0'], [...received, frame(4, 'input_received', { gateId: gate })]).join('\n')).toMatch(/received 2 times/);
  });

  it('lets the step after the input run again when its end was never reported (a resume runs it again)', () => {
    expect(scenario([answer('v0', 200)], ['k1r6-n v0', 'k1r6-n v0'], received)).toEqual([]);
  });

  it('flags the step after the input run twice once reported done, run with a value nobody answered, or not run in a completed run', () => {
    const done = [...received, frame(4, 'step_complete', { stepId: 's1', status: 'done' })];
    expect(scenario([answer('v0', 200)], ['k1r6-n v0', 'k1r6-n v0'], done, 'completed', done).join('\n')).toMatch(/reported done before the crash and ran 2 times/);
    expect(scenario([answer('v0', 200), answer('v1', 409)], ['k1r6-n v1'], received).join('\n')).toMatch(/no answer sent that was taken/);
    expect(scenario([answer('v0', 200)], [], received).join('\n')).toMatch(/completed, but the step after the input never ran/);
  });

  it('flags an input asked again after its answer was received (a resume must take the kept answer)', () => {
    const reasked = [...received, frame(4, 'interrupted'), frame(5, 'resumed'), frame(6, 'input_requested', { gateId: 'g2' })];
    expect(scenario([answer('v0', 200)], ['k1r6-s1', 'k1r6-n v0'], reasked).join('\n')).toMatch(/asked again/);
  });
});
