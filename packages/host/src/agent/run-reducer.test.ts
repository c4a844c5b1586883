import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type GateTicket, initialRunState, onlyGated, type Reduction, type RunAction, type RunInput, type RunState, reduce, type StepNode, statusOf } from './run-reducer';

/** A random DAG: step i depends on some of the steps before it. */
const dag = fc.integer({ min: 1, max: 9 }).chain((n) =>
  fc.tuple(...Array.from({ length: n }, (_, i) => fc.subarray(Array.from({ length: i }, (_, j) => `s${j}`), { maxLength: Math.min(3, i) }))).map((deps) => deps.map((d, i) => ({ id: `s${i}`, dependsOn: d }) as StepNode)),
);

/** What the outside world may do next, chosen by an index into the choices available. */
const moves = fc.array(fc.record({ pick: fc.nat(), ok: fc.boolean(), kind: fc.constantFrom('settle', 'settle', 'settle', 'gate', 'resolve', 'cancel') }), { maxLength: 80 });

const starts = (actions: RunAction[]) => actions.flatMap((a) => (a.type === 'start_steps' ? a.stepIds : []));

interface Walk {
  trace: Array<{ before: RunState; input: RunInput; after: Reduction }>;
  final: RunState;
}

function recount(state: RunState): { active: number; done: number; failed: number; skipped: number } {
  const all = state.steps.map((s) => statusOf(state, s.id));
  return { active: all.filter((x) => x === 'active' || x === 'waiting').length, done: all.filter((x) => x === 'done').length, failed: all.filter((x) => x === 'failed').length, skipped: all.filter((x) => x === 'skipped').length };
}

/** Each step's prerequisites that are not done, counted again from the statuses. */
function reunmet(state: RunState): number[] {
  return state.steps.map((s) => [...new Set(s.dependsOn)].filter((d) => statusOf(state, d) !== 'done').length);
}

function walk(steps: StepNode[], maxConcurrency: number, review: boolean, script: Array<{ pick: number; ok: boolean; kind: string }>): Walk {
  const trace: Walk['trace'] = [];
  let state = initialRunState(maxConcurrency, review);
  let gateNo = 0;
  const apply = (input: RunInput) => {
    const given = JSON.stringify(state);
    const after = reduce(state, input);
    // the reducer mutates nothing it is given, and the counts it keeps match the statuses
    expect(JSON.stringify(state)).toBe(given);
    expect(after.state.counts).toEqual(recount(after.state));
    expect(after.state.unmet).toEqual(reunmet(after.state));
    trace.push({ before: state, input, after });
    state = after.state;
  };
  apply({ type: 'begin', steps });
  if (review) apply({ type: 'plan_approved', key: 'plan', steps });
  for (const m of script) {
    if (state.phase === 'ended') break;
    const active = steps.filter((s) => statusOf(state, s.id) === 'active').map((s) => s.id);
    if (m.kind === 'cancel') apply({ type: 'cancel' });
    else if (m.kind === 'resolve' && state.gates[0]) apply({ type: 'gate_resolved', key: state.gates[0].key, outcome: m.ok ? 'approved' : 'rejected' });
    else if (m.kind === 'gate' && active.length) apply({ type: 'gate_requested', ticket: { key: `g${gateNo++}`, kind: 'step', stepId: active[m.pick % active.length] as string } });
    else if (active.length) apply({ type: 'step_settled', stepId: active[m.pick % active.length] as string, ok: m.ok || m.pick % 5 !== 0 });
    else if (state.cancelRequested) {
      const waiting = steps.filter((s) => statusOf(state, s.id) === 'waiting');
      if (waiting[0]) apply({ type: 'step_parked', stepId: waiting[0].id });
    }
  }
  return { trace, final: state };
}

const scenario = fc.record({ steps: dag, max: fc.integer({ min: 1, max: 4 }), review: fc.boolean(), script: moves });

describe('run reducer (properties)', () => {
  it('starts every step at most once per attempt', () => {
    fc.assert(
      fc.property(scenario, ({ steps, max, review, script }) => {
        const all = walk(steps, max, review, script).trace.flatMap((t) => starts(t.after.actions));
        expect(new Set(all).size).toBe(all.length);
      }),
    );
  });

  it('starts a step only when all its dependencies are done, within the concurrency bound', () => {
    fc.assert(
      fc.property(scenario, ({ steps, max, review, script }) => {
        for (const t of walk(steps, max, review, script).trace) {
          for (const id of starts(t.after.actions)) {
            const step = steps.find((s) => s.id === id) as StepNode;
            for (const d of step.dependsOn) expect(statusOf(t.after.state, d)).toBe('done');
            expect(statusOf(t.before, id) ?? 'pending').toBe('pending');
          }
          const busy = [...t.after.state.status].filter((s) => s === 'active' || s === 'waiting').length;
          expect(busy).toBeLessThanOrEqual(max);
        }
      }),
    );
  });

  it('starts nothing after a cancel, and ends cancelled once nothing runs', () => {
    fc.assert(
      fc.property(scenario, ({ steps, max, review, script }) => {
        const { trace, final } = walk(steps, max, review, script);
        const at = trace.findIndex((t) => t.input.type === 'cancel');
        if (at < 0) return;
        for (const t of trace.slice(at)) expect(starts(t.after.actions)).toEqual([]);
        const busy = [...final.status].some((s) => s === 'active' || s === 'waiting');
        if (!busy && trace[at]?.before.phase !== 'ended') expect(final.outcome).toBe('cancelled');
      }),
    );
  });

  it('a gate blocks exactly its step: the others start and settle as if it were running', () => {
    fc.assert(
      fc.property(scenario, ({ steps, max, review, script }) => {
        for (const t of walk(steps, max, review, script).trace) {
          if (t.input.type !== 'gate_requested' || t.before.cancelRequested) continue;
          const gated = (t.input.ticket as GateTicket).stepId as string;
          expect(statusOf(t.after.state, gated)).toBe('waiting');
          for (const other of steps.filter((s) => s.id !== gated && statusOf(t.before, s.id) === 'active')) {
            for (const ok of [true, false]) {
              const withGate = reduce(t.after.state, { type: 'step_settled', stepId: other.id, ok });
              const without = reduce(t.before, { type: 'step_settled', stepId: other.id, ok });
              expect(starts(withGate.actions)).toEqual(starts(without.actions));
            }
          }
        }
      }),
    );
  });

  it('a run that only waits at its gates (its host may let go of it) has nothing active, and goes on only by a gate’s answer or a cancel', () => {
    fc.assert(
      fc.property(scenario, ({ steps, max, review, script }) => {
        for (const t of walk(steps, max, review, script).trace) {
          const s = t.after.state;
          if (onlyGated(s)) {
            expect(s.gates.length).toBeGreaterThan(0);
            expect([...s.status]).not.toContain('active');
            expect(s.phase === 'ended' || s.cancelRequested).toBe(false);
          }
          // the last active step asking for its gate leaves the run only waiting
          if (t.input.type === 'gate_requested' && !t.before.cancelRequested && ![...s.status].includes('active')) expect(onlyGated(s)).toBe(true);
          // nothing starts from such a state but by a gate's answer (a step's, or the plan review's)
          if (onlyGated(t.before) && starts(t.after.actions).length) expect(['gate_resolved', 'plan_approved']).toContain(t.input.type);
        }
      }),
    );
  });

  it('finishes exactly once, and completes only when every step is done', () => {
    fc.assert(
      fc.property(scenario, ({ steps, max, review, script }) => {
        const { trace, final } = walk(steps, max, review, script);
        const finishes = trace.flatMap((t) => t.after.actions.filter((a) => a.type === 'finish'));
        expect(finishes.length).toBeLessThanOrEqual(1);
        if (final.outcome === 'completed') for (const s of steps) expect(statusOf(final, s.id)).toBe('done');
      }),
    );
  });
});

describe('run reducer (examples)', () => {
  const chain: StepNode[] = [
    { id: 'a', dependsOn: [] },
    { id: 'b', dependsOn: ['a'] },
  ];

  it('drafts a plan when none is given, then opens the plan gate', () => {
    const s0 = initialRunState(8, true);
    const r1 = reduce(s0, { type: 'begin' });
    expect(r1.actions).toEqual([{ type: 'draft_plan' }]);
    const r2 = reduce(r1.state, { type: 'plan_drafted', steps: chain });
    expect(r2.actions).toEqual([{ type: 'open_gate', ticket: { key: 'plan', kind: 'plan' } }]);
    const r3 = reduce(r2.state, { type: 'plan_approved', key: 'plan', steps: chain });
    expect(r3.actions).toEqual([{ type: 'start_steps', stepIds: ['a'] }]);
  });

  it('queues step gates in order and opens the next when one resolves', () => {
    const wide: StepNode[] = [
      { id: 'a', dependsOn: [] },
      { id: 'b', dependsOn: [] },
    ];
    let r = reduce(initialRunState(8, false), { type: 'begin', steps: wide });
    r = reduce(r.state, { type: 'gate_requested', ticket: { key: 'g1', kind: 'step', stepId: 'a' } });
    expect(r.actions).toEqual([{ type: 'open_gate', ticket: { key: 'g1', kind: 'step', stepId: 'a' } }]);
    r = reduce(r.state, { type: 'gate_requested', ticket: { key: 'g2', kind: 'step', stepId: 'b' } });
    expect(r.actions).toEqual([]);
    r = reduce(r.state, { type: 'gate_resolved', key: 'g1', outcome: 'approved' });
    expect(r.actions).toEqual([{ type: 'open_gate', ticket: { key: 'g2', kind: 'step', stepId: 'b' } }]);
    expect(statusOf(r.state, 'a')).toBe('active');
  });

  it('rejecting the plan gate ends the run cancelled', () => {
    const r1 = reduce(initialRunState(8, true), { type: 'begin', steps: chain });
    const r2 = reduce(r1.state, { type: 'gate_resolved', key: 'plan', outcome: 'rejected' });
    expect(r2.actions).toContainEqual({ type: 'finish', outcome: 'cancelled' });
  });

  it('a settled or parked step it does not know changes nothing and mutates nothing', () => {
    const wide: StepNode[] = [
      { id: 'a', dependsOn: [] },
      { id: 'b', dependsOn: ['a'] },
      { id: 'c', dependsOn: [] },
    ];
    const r0 = reduce(initialRunState(1, false), { type: 'begin', steps: wide });
    const given = JSON.stringify(r0.state);
    for (const input of [{ type: 'step_settled', stepId: 'zz', ok: true }, { type: 'step_parked', stepId: 'zz' }] as RunInput[]) {
      const r = reduce(r0.state, input);
      expect(r.actions).toEqual([]);
      expect(JSON.stringify(r.state)).toBe(given);
      expect(JSON.stringify(r0.state)).toBe(given);
    }
    // the next real settle still starts what became ready, in a state of its own
    const r1 = reduce(r0.state, { type: 'step_settled', stepId: 'a', ok: true });
    expect(r1.actions).toEqual([{ type: 'start_steps', stepIds: ['b'] }]);
    expect(statusOf(r0.state, 'b')).toBe('pending');
    expect(r1.state.counts).toEqual({ active: 1, done: 1, failed: 0, skipped: 0 });
  });

  it('starts a level once every step of the one before it is done, in one start and in plan order', () => {
    const level = (n: number, before: string[]) => Array.from({ length: 3 }, (_, i) => ({ id: `l${n}s${i}`, dependsOn: before }));
    const l0 = level(0, []);
    const l1 = level(1, l0.map((s) => s.id));
    const l2 = level(2, l1.map((s) => s.id));
    let r = reduce(initialRunState(8, false), { type: 'begin', steps: [...l0, ...l1, ...l2] });
    expect(r.actions).toEqual([{ type: 'start_steps', stepIds: ['l0s0', 'l0s1', 'l0s2'] }]);
    for (const [id, started] of [['l0s1', []], ['l0s0', []], ['l0s2', ['l1s0', 'l1s1', 'l1s2']], ['l1s2', []], ['l1s0', []], ['l1s1', ['l2s0', 'l2s1', 'l2s2']]] as const) {
      r = reduce(r.state, { type: 'step_settled', stepId: id, ok: true });
      expect(starts(r.actions)).toEqual(started);
    }
  });

  it('a prerequisite named twice is met once it is done; an unknown one is never met', () => {
    const steps: StepNode[] = [
      { id: 'a', dependsOn: [] },
      { id: 'b', dependsOn: ['a', 'a'] },
      { id: 'c', dependsOn: ['a', 'zz'] },
    ];
    let r = reduce(initialRunState(8, false), { type: 'begin', steps });
    r = reduce(r.state, { type: 'step_settled', stepId: 'a', ok: true });
    expect(r.actions).toEqual([{ type: 'start_steps', stepIds: ['b'] }]);
    r = reduce(r.state, { type: 'step_settled', stepId: 'b', ok: true });
    expect(r.actions).toEqual([]);
    expect(statusOf(r.state, 'c')).toBe('pending');
  });

  it('a settle repeated for a done step meets its dependents\' prerequisite once', () => {
    const steps: StepNode[] = [
      { id: 'a', dependsOn: [] },
      { id: 'b', dependsOn: [] },
      { id: 'c', dependsOn: ['a', 'b'] },
    ];
    let r = reduce(initialRunState(8, false), { type: 'begin', steps });
    r = reduce(r.state, { type: 'step_settled', stepId: 'a', ok: true });
    r = reduce(r.state, { type: 'step_settled', stepId: 'a', ok: true });
    expect(r.actions).toEqual([]);
    expect(r.state.unmet).toEqual([0, 0, 1]);
    r = reduce(r.state, { type: 'step_settled', stepId: 'b', ok: true });
    expect(r.actions).toEqual([{ type: 'start_steps', stepIds: ['c'] }]);
  });

  it('reused steps count as done', () => {
    const r = reduce(initialRunState(8, false), { type: 'begin', steps: chain, done: ['a'] });
    expect(r.actions).toEqual([{ type: 'start_steps', stepIds: ['b'] }]);
  });
});
