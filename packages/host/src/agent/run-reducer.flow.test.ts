import { parseDependency } from '@fengyu/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { initialRunState, type RunAction, type RunInput, type RunState, reduce, type StepNode } from './run-reducer';

/**
 * Properties of conditions, ports, joins, skips, `onError` and forEach iterations over random
 * plans: every step ends exactly once (done, failed or skipped); no step starts whose port was
 * not taken (a step set to `branch` takes `ok` or `error`); `join: all` / `join: any` hold; a
 * failure ends the run failed only when its step's `onError` is `fail`; a loop runs each
 * iteration's body steps once.
 */

interface FlowStep extends StepNode {
  /** Ports of a condition (its cases plus `else`); undefined for other steps. */
  ports?: string[];
}

/** The ports a dependency may name: a condition's, plus `ok` (not on a condition) and `error` when it branches on error. */
const namedPorts = (s: FlowStep): string[] | undefined => {
  if (s.onError !== 'branch') return s.ports;
  return [...(s.ports ?? ['ok']), 'error'];
};

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
          onError: fc.constantFrom(undefined, undefined, 'continue' as const, 'branch' as const),
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
          const named = namedPorts(source);
          // a dependency on a condition or a branching step names one of its ports, or (every fourth) none
          return named && pick % 4 !== 0 ? `s${j}:${named[pick % named.length]}` : `s${j}`;
        });
        steps.push({ id: `s${i}`, dependsOn, ...(spec.any ? { join: 'any' as const } : {}), ...(ports ? { ports } : {}), ...(spec.onError ? { onError: spec.onError } : {}) });
      });
      return steps;
    }),
);

const script = fc.array(fc.record({ pick: fc.nat(), fail: fc.nat({ max: 9 }) }), { maxLength: 60 });

interface Outcome {
  state: 'done' | 'failed' | 'skipped';
  port?: string;
  /** A failure its step's `onError` handled (the run goes on). */
  handled?: boolean;
}

/** How a step's end reads to its dependents (the model the reducer is checked against, written apart from it). */
function outcomeOf(step: FlowStep, ok: boolean, port: string | undefined): Outcome {
  if (!ok && step.onError === 'continue') return { state: 'done', handled: true };
  if (!ok && step.onError === 'branch') return { state: 'done', port: 'error', handled: true };
  if (!ok) return { state: 'failed' };
  return { state: 'done', port: port ?? (step.onError === 'branch' ? 'ok' : undefined) };
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
    // a plain edge: any port but `error`
    return (port === undefined ? o.port !== 'error' : port === o.port) ? 'satisfied' : 'skipped';
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
    ended.set(id, outcomeOf(step, ok, port));
    apply({ type: 'step_settled', stepId: id, ok, port });
  }
  // settle what is left, all ok (first port)
  while (active.length && !finished) {
    const id = active.shift() as string;
    const step = byId.get(id) as FlowStep;
    ended.set(id, outcomeOf(step, true, step.ports?.[0]));
    apply({ type: 'step_settled', stepId: id, ok: true, port: step.ports?.[0] });
  }
  return { ended, finished, state };
}

const byOnError = (steps: FlowStep[], id: string) => steps.find((s) => s.id === id)?.onError;

describe('run reducer: conditions, ports, joins and skips (properties)', () => {
  it('ends every step exactly once, starts only steps whose ports were taken, and keeps join semantics', () => {
    fc.assert(
      fc.property(flowPlan, script, fc.integer({ min: 1, max: 4 }), (steps, picks, max) => {
        const { ended, finished } = run(steps, picks, max);
        expect(finished?.type).toBe('finish');
        const outcome = (finished as { outcome: string }).outcome;
        // only a failure that no onError handled fails the run
        const failed = [...ended.values()].some((o) => o.state === 'failed');
        expect(outcome).toBe(failed ? 'failed' : 'completed');
        if (outcome === 'failed') expect([...ended.entries()].some(([id, o]) => o.state === 'failed' && !byOnError(steps, id))).toBe(true);
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

describe('run reducer: onError', () => {
  const plan: StepNode[] = [
    { id: 'x', dependsOn: [], onError: 'branch' },
    { id: 'good', dependsOn: ['x:ok'] },
    { id: 'plain', dependsOn: ['x'] },
    { id: 'bad', dependsOn: ['x:error'] },
    { id: 'after', dependsOn: ['good', 'bad'], join: 'any' },
  ];

  it('branch: a failure takes x:error, skipping x / x:ok; join any runs after it; the run completes', () => {
    let r = reduce(initialRunState(8, false), { type: 'begin', steps: plan });
    r = reduce(r.state, { type: 'step_settled', stepId: 'x', ok: false });
    expect(r.actions).toEqual([
      { type: 'skip_steps', stepIds: ['good', 'plain'] },
      { type: 'start_steps', stepIds: ['bad'] },
    ]);
    r = reduce(r.state, { type: 'step_settled', stepId: 'bad', ok: true });
    expect(r.actions).toEqual([{ type: 'start_steps', stepIds: ['after'] }]);
    r = reduce(r.state, { type: 'step_settled', stepId: 'after', ok: true });
    expect(r.actions).toEqual([{ type: 'finish', outcome: 'completed' }]);
  });

  it('branch: a success takes x:ok (and x), skipping x:error', () => {
    let r = reduce(initialRunState(8, false), { type: 'begin', steps: plan });
    r = reduce(r.state, { type: 'step_settled', stepId: 'x', ok: true });
    expect(r.actions).toEqual([
      { type: 'skip_steps', stepIds: ['bad'] },
      { type: 'start_steps', stepIds: ['good', 'plain'] },
    ]);
  });

  it('continue: dependents run after a failure and the run completes; fail (the default) fails it', () => {
    const steps = (onError?: 'continue'): StepNode[] => [{ id: 'x', dependsOn: [], ...(onError ? { onError } : {}) }, { id: 'y', dependsOn: ['x'] }];
    let r = reduce(initialRunState(8, false), { type: 'begin', steps: steps('continue') });
    r = reduce(r.state, { type: 'step_settled', stepId: 'x', ok: false });
    expect(r.actions).toEqual([{ type: 'start_steps', stepIds: ['y'] }]);
    r = reduce(r.state, { type: 'step_settled', stepId: 'y', ok: true });
    expect(r.actions).toEqual([{ type: 'finish', outcome: 'completed' }]);
    r = reduce(initialRunState(8, false), { type: 'begin', steps: steps() });
    r = reduce(r.state, { type: 'step_settled', stepId: 'x', ok: false });
    expect(r.actions).toEqual([{ type: 'finish', outcome: 'failed' }]);
  });

  it('per iteration inside a forEach: a handled failure keeps the loop going, its branch taken in that iteration only', () => {
    const steps: StepNode[] = [{ id: 'each', dependsOn: [], concurrency: 1, body: [{ id: 'f', dependsOn: [], onError: 'branch' }, { id: 'ok', dependsOn: ['f:ok'] }, { id: 'err', dependsOn: ['f:error'] }] }];
    let r = reduce(initialRunState(4, false), { type: 'begin', steps });
    r = reduce(r.state, { type: 'loop_started', stepId: 'each', total: 2 });
    r = reduce(r.state, { type: 'body_settled', loopId: 'each', iteration: 0, stepId: 'f', ok: false });
    expect(r.actions).toEqual([
      { type: 'skip_steps', loopId: 'each', iteration: 0, stepIds: ['ok'] },
      { type: 'start_body', loopId: 'each', iteration: 0, stepIds: ['err'] },
    ]);
    r = reduce(r.state, { type: 'body_settled', loopId: 'each', iteration: 0, stepId: 'err', ok: true });
    expect(r.actions).toEqual([
      { type: 'iteration_done', loopId: 'each', iteration: 0, done: 1, total: 2 },
      { type: 'start_body', loopId: 'each', iteration: 1, stepIds: ['f'] },
    ]);
    r = reduce(r.state, { type: 'body_settled', loopId: 'each', iteration: 1, stepId: 'f', ok: true });
    expect(r.actions).toEqual([
      { type: 'skip_steps', loopId: 'each', iteration: 1, stepIds: ['err'] },
      { type: 'start_body', loopId: 'each', iteration: 1, stepIds: ['ok'] },
    ]);
    r = reduce(r.state, { type: 'body_settled', loopId: 'each', iteration: 1, stepId: 'ok', ok: true });
    expect(r.actions).toEqual([
      { type: 'iteration_done', loopId: 'each', iteration: 1, done: 2, total: 2 },
      { type: 'loop_done', loopId: 'each', ok: true, cancelled: false },
    ]);
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
