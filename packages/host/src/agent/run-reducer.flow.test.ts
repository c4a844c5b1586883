import { parseDependency } from '@fengyu/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { initialRunState, type RunAction, type RunInput, type RunState, reduce, type StepNode } from './run-reducer';

/**
 * Properties of conditions, ports, joins, skips and forEach iterations over random
 * plans: every step ends exactly once (done, failed or skipped); no step starts whose port was
 * not taken; `join: all` / `join: any` hold; a loop runs each iteration's body steps once.
 */

interface FlowStep extends StepNode {
  /** Ports of a condition (its cases plus `else`); undefined for other steps. */
  ports?: string[];
}

/** A random plan: step i depends on up to 3 earlier steps, through a port when that step is a condition. */
const flowPlan = fc.integer({ min: 1, max: 9 }).chain((n) =>
  fc
    .tuple(
      ...Array.from({ length: n }, (_, i) =>
        fc.record({
          cases: fc.integer({ min: 0, max: 3 }),
          deps: fc.subarray(Array.from({ length: i }, (_, j) => j), { maxLength: Math.min(3, i) }),
          portPicks: fc.array(fc.nat(), { minLength: 3, maxLength: 3 }),
          any: fc.boolean(),
        }),
      ),
    )
    .map((specs) => {
      const steps: FlowStep[] = [];
      specs.forEach((spec, i) => {
        const ports = spec.cases > 0 ? [...Array.from({ length: spec.cases }, (_, k) => `c${k}`), 'else'] : undefined;
        const dependsOn = spec.deps.map((j, k) => {
          const source = steps[j] as FlowStep;
          const pick = spec.portPicks[k] as number;
          // a dependency on a condition names one of its ports, or (every fourth) none
          return source.ports && pick % 4 !== 0 ? `s${j}:${source.ports[pick % source.ports.length]}` : `s${j}`;
        });
        steps.push({ id: `s${i}`, dependsOn, ...(spec.any ? { join: 'any' as const } : {}), ...(ports ? { ports } : {}) });
      });
      return steps;
    }),
);

const script = fc.array(fc.record({ pick: fc.nat(), fail: fc.nat({ max: 9 }) }), { maxLength: 60 });

interface Outcome {
  state: 'done' | 'failed' | 'skipped';
  port?: string;
}

/** Runs a plan to its end with random ports and an occasional failure; checks each reduction as it goes. */
function run(steps: FlowStep[], picks: { pick: number; fail: number }[], maxConcurrency: number) {
  let state: RunState = initialRunState(maxConcurrency, false);
  const ended = new Map<string, Outcome>();
  const started = new Set<string>();
  const active: string[] = [];
  let finished: RunAction | undefined;
  const byId = new Map(steps.map((s) => [s.id, s]));
  const edgeState = (entry: string): 'satisfied' | 'skipped' | 'open' => {
    const { stepId, port } = parseDependency(entry);
    const o = ended.get(stepId);
    if (!o || o.state === 'failed') return 'open';
    if (o.state === 'skipped') return 'skipped';
    return port === undefined || port === o.port ? 'satisfied' : 'skipped';
  };
  const apply = (input: RunInput) => {
    const given = JSON.stringify({ ...state, loops: [...state.loops] });
    const r = reduce(state, input);
    expect(JSON.stringify({ ...state, loops: [...state.loops] })).toBe(given);
    for (const a of r.actions) {
      if (a.type === 'start_steps')
        for (const id of a.stepIds) {
          const step = byId.get(id) as FlowStep;
          expect(started.has(id) || ended.has(id)).toBe(false);
          const edges = step.dependsOn.map(edgeState);
          // join all: every edge satisfied; join any: every edge settled, one satisfied
          if (step.join === 'any' && edges.length) {
            expect(edges).not.toContain('open');
            expect(edges).toContain('satisfied');
          } else expect(edges.every((e) => e === 'satisfied')).toBe(true);
          started.add(id);
          active.push(id);
        }
      if (a.type === 'skip_steps')
        for (const id of a.stepIds) {
          const step = byId.get(id) as FlowStep;
          expect(started.has(id) || ended.has(id)).toBe(false);
          const edges = step.dependsOn.map(edgeState);
          if (step.join === 'any') expect(edges.every((e) => e === 'skipped')).toBe(true);
          else expect(edges).toContain('skipped');
          ended.set(id, { state: 'skipped' });
        }
      if (a.type === 'finish') {
        expect(finished).toBeUndefined();
        finished = a;
      }
    }
    state = r.state;
  };
  apply({ type: 'begin', steps });
  for (const m of picks) {
    if (!active.length || finished) break;
    const id = active.splice(m.pick % active.length, 1)[0] as string;
    const step = byId.get(id) as FlowStep;
    const ok = m.fail !== 0;
    const port = ok && step.ports ? step.ports[m.pick % step.ports.length] : undefined;
    ended.set(id, { state: ok ? 'done' : 'failed', port });
    apply({ type: 'step_settled', stepId: id, ok, port });
  }
  // settle what is left, all ok (first port)
  while (active.length && !finished) {
    const id = active.shift() as string;
    const step = byId.get(id) as FlowStep;
    ended.set(id, { state: 'done', port: step.ports?.[0] });
    apply({ type: 'step_settled', stepId: id, ok: true, port: step.ports?.[0] });
  }
  return { ended, finished, state };
}

describe('run reducer: conditions, ports, joins and skips (properties)', () => {
  it('ends every step exactly once, starts only steps whose ports were taken, and keeps join semantics', () => {
    fc.assert(
      fc.property(flowPlan, script, fc.integer({ min: 1, max: 4 }), (steps, picks, max) => {
        const { ended, finished } = run(steps, picks, max);
        expect(finished?.type).toBe('finish');
        const outcome = (finished as { outcome: string }).outcome;
        const failed = [...ended.values()].some((o) => o.state === 'failed');
        expect(outcome).toBe(failed ? 'failed' : 'completed');
        // a completed run ended every step, each once, as done or skipped
        if (outcome === 'completed') expect(steps.every((s) => ended.has(s.id))).toBe(true);
      }),
      { numRuns: 300 },
    );
  });

  it('skips the untaken branch and everything hanging only on it; join any runs after either branch', () => {
    const steps: StepNode[] = [
      { id: 'check', dependsOn: [] },
      { id: 'big', dependsOn: ['check:big'] },
      { id: 'after_big', dependsOn: ['big'] },
      { id: 'small', dependsOn: ['check:else'] },
      { id: 'report', dependsOn: ['after_big', 'small'], join: 'any' },
      { id: 'both', dependsOn: ['after_big', 'small'] },
    ];
    let r = reduce(initialRunState(8, false), { type: 'begin', steps });
    r = reduce(r.state, { type: 'step_settled', stepId: 'check', ok: true, port: 'else' });
    expect(r.actions).toEqual([
      { type: 'skip_steps', stepIds: ['big', 'after_big', 'both'] },
      { type: 'start_steps', stepIds: ['small'] },
    ]);
    r = reduce(r.state, { type: 'step_settled', stepId: 'small', ok: true });
    expect(r.actions).toEqual([{ type: 'start_steps', stepIds: ['report'] }]);
    r = reduce(r.state, { type: 'step_settled', stepId: 'report', ok: true });
    expect(r.actions).toEqual([{ type: 'finish', outcome: 'completed' }]);
  });
});

describe('run reducer: forEach iterations', () => {
  const loopPlan = (concurrency: number): StepNode[] => [
    { id: 'each', dependsOn: [], concurrency, body: [{ id: 'check', dependsOn: [] }, { id: 'mail', dependsOn: ['check:big'] }, { id: 'note', dependsOn: ['check:else'] }, { id: 'last', dependsOn: ['mail', 'note'], join: 'any' }] },
    { id: 'after', dependsOn: ['each'] },
  ];

  it('runs each iteration once, at most `concurrency` at a time, with its own branches, then settles', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 7 }), fc.integer({ min: 1, max: 3 }), fc.array(fc.nat(), { maxLength: 200 }), (total, concurrency, picks) => {
        let r = reduce(initialRunState(4, false), { type: 'begin', steps: loopPlan(concurrency) });
        expect(r.actions).toEqual([{ type: 'start_steps', stepIds: ['each'] }]);
        const inFlight: Array<{ iteration: number; stepId: string }> = [];
        const starts = new Set<string>();
        const done: number[] = [];
        let loopDone: RunAction | undefined;
        const take = (actions: RunAction[]) => {
          for (const a of actions) {
            if (a.type === 'start_body')
              for (const id of a.stepIds) {
                const key = `${id}#${a.iteration}`;
                expect(starts.has(key)).toBe(false);
                starts.add(key);
                inFlight.push({ iteration: a.iteration, stepId: id });
              }
            if (a.type === 'iteration_done') done.push(a.iteration);
            if (a.type === 'loop_done') loopDone = a;
          }
          const running = new Set(inFlight.map((x) => x.iteration));
          expect(running.size).toBeLessThanOrEqual(concurrency);
        };
        r = reduce(r.state, { type: 'loop_started', stepId: 'each', total });
        take(r.actions);
        let k = 0;
        while (inFlight.length) {
          const next = inFlight.splice((picks[k++] ?? 0) % inFlight.length, 1)[0] as { iteration: number; stepId: string };
          const port = next.stepId === 'check' ? (next.iteration % 2 ? 'big' : 'else') : undefined;
          r = reduce(r.state, { type: 'body_settled', loopId: 'each', iteration: next.iteration, stepId: next.stepId, ok: true, port });
          take(r.actions);
        }
        expect(loopDone).toEqual({ type: 'loop_done', loopId: 'each', ok: true, cancelled: false });
        expect([...done].sort((a, b) => a - b)).toEqual(Array.from({ length: total }, (_, i) => i));
        // per iteration: check, one branch, last (the other branch skipped)
        for (let i = 0; i < total; i++) expect(starts.has(`${i % 2 ? 'mail' : 'note'}#${i}`) && starts.has(`last#${i}`) && !starts.has(`${i % 2 ? 'note' : 'mail'}#${i}`)).toBe(true);
        r = reduce(r.state, { type: 'step_settled', stepId: 'each', ok: true });
        expect(r.actions).toEqual([{ type: 'start_steps', stepIds: ['after'] }]);
      }),
      { numRuns: 150 },
    );
  });

  it('stops admitting iterations on cancel and ends the loop once those in flight end', () => {
    let r = reduce(initialRunState(4, false), { type: 'begin', steps: loopPlan(2) });
    r = reduce(r.state, { type: 'loop_started', stepId: 'each', total: 10 });
    expect(r.actions.filter((a) => a.type === 'start_body')).toHaveLength(2);
    r = reduce(r.state, { type: 'cancel' });
    r = reduce(r.state, { type: 'body_settled', loopId: 'each', iteration: 0, stepId: 'check', ok: true, port: 'big' });
    expect(r.actions.some((a) => a.type === 'start_body')).toBe(false);
    r = reduce(r.state, { type: 'body_settled', loopId: 'each', iteration: 1, stepId: 'check', ok: true, port: 'big' });
    expect(r.actions.filter((a) => a.type !== 'skip_steps')).toEqual([{ type: 'loop_done', loopId: 'each', ok: false, cancelled: true }]);
  });

  it('fails the loop when a body step fails, after the iterations in flight end', () => {
    let r = reduce(initialRunState(4, false), { type: 'begin', steps: loopPlan(2) });
    r = reduce(r.state, { type: 'loop_started', stepId: 'each', total: 5 });
    r = reduce(r.state, { type: 'body_settled', loopId: 'each', iteration: 0, stepId: 'check', ok: false });
    expect(r.actions).toEqual([]);
    r = reduce(r.state, { type: 'body_settled', loopId: 'each', iteration: 1, stepId: 'check', ok: true, port: 'else' });
    expect(r.actions).toEqual([{ type: 'skip_steps', loopId: 'each', iteration: 1, stepIds: ['mail'] }, { type: 'loop_done', loopId: 'each', ok: false, cancelled: false }]);
  });
});
