/**
 * The runner's core: one pure function `reduce(state, event) → { state, actions }`. It owns the
 * run's phase, each step's state, the queue of approval gates, cancellation, and each running
 * forEach's iterations, and says what to do next (draft the plan, open this gate, start these
 * steps, skip these, finish the loop, finish the run). It does no I/O, reads no clock and mutates
 * nothing it is given; `run-executor.ts` performs the actions and feeds back what happened.
 *
 *   begin ─┬─(no plan)→ planning ──plan_drafted──┐
 *          └─(plan)─────────────────────────────┴→ reviewing (plan gate) ─approved→ executing
 *                                                 └─(no review)──────────────────→ executing
 *   executing: start ready steps (their join holds, within maxConcurrency) → step_settled …
 *   a settled step settles its outgoing edges (`flow-scope.ts`): dependents whose join fails
 *   are skipped at once (skip_steps), the skip running down the graph;
 *   a forEach starts as a step; once the executor knows its items (loop_started) the reducer
 *   admits up to `concurrency` iterations, each a scope of the body's steps (start_body,
 *   body_settled …), and when every iteration ended (or one failed, or cancel arrived and none
 *   is in flight) says loop_done; the executor then settles the loop as a step;
 *   a step gate parks only its own step (waiting) until gate_resolved; cancel stops new starts
 *   and new iterations; the run finishes when every step is done or skipped, or a step failed /
 *   cancel arrived and none is active.
 */

import { decide } from './decide';
import { cloneScope, emptyScope, type MutableScope, type PlanGraph, planGraph, type Scope, type StepState, scopeSettled, setState, settleStep, type StepNode } from './flow-scope';

export type { PlanGraph, StepCounts, StepNode, StepState } from './flow-scope';
export { planGraph } from './flow-scope';

export type RunPhase = 'planning' | 'reviewing' | 'executing' | 'ended';
export type RunOutcome = 'completed' | 'failed' | 'cancelled';
export type GateOutcomeKind = 'approved' | 'rejected' | 'cancelled';

/** A request for approval: the plan gate, or a gate of one step (queued in request order). */
export interface GateTicket {
  key: string;
  kind: 'plan' | 'step';
  stepId?: string;
}

/** A forEach in flight: its item count, the next iteration to admit, and the scopes of the iterations running. */
export interface LoopState {
  total: number;
  next: number;
  finished: number;
  failed: boolean;
  concurrency: number;
  graph: PlanGraph;
  iterations: ReadonlyMap<number, Scope>;
}

export interface RunState extends Scope {
  phase: RunPhase;
  steps: readonly StepNode[];
  /** Running forEach steps by id. */
  loops: ReadonlyMap<string, LoopState>;
  /** Gates in request order; the first is the open one. */
  gates: readonly GateTicket[];
  maxConcurrency: number;
  review: boolean;
  cancelRequested: boolean;
  outcome?: RunOutcome;
}

/** A step carried over done from an earlier run, with the port it took (a condition's branch). */
export type DoneStep = string | { id: string; port?: string };

export type RunInput =
  /** The run begins; `steps` is the plan if known; `done` are reused completed steps. */
  | { type: 'begin'; steps?: readonly StepNode[]; done?: readonly DoneStep[] }
  | { type: 'plan_drafted'; steps: readonly StepNode[]; done?: readonly DoneStep[] }
  /** The plan gate was approved, possibly with an edited plan; `done` are reused steps. */
  | { type: 'plan_approved'; key: string; steps: readonly StepNode[]; done?: readonly DoneStep[] }
  | { type: 'gate_requested'; ticket: GateTicket }
  | { type: 'gate_resolved'; key: string; outcome: GateOutcomeKind }
  /** A top-level step ended; `port` is the port it took (a condition's branch). */
  | { type: 'step_settled'; stepId: string; ok: boolean; port?: string }
  /** A started step stopped before running (its gate was cancelled): it is pending again. */
  | { type: 'step_parked'; stepId: string }
  /** A started forEach knows its items: `total` iterations to run. */
  | { type: 'loop_started'; stepId: string; total: number }
  /** A body step of one iteration ended. */
  | { type: 'body_settled'; loopId: string; iteration: number; stepId: string; ok: boolean; port?: string }
  /** A body step stopped before running (its gate was cancelled). */
  | { type: 'body_parked'; loopId: string; iteration: number; stepId: string }
  | { type: 'cancel' }
  /** The run failed outside of a step (planning, an invalid edited plan, storage). */
  | { type: 'fail' };

export type RunAction =
  | { type: 'draft_plan' }
  | { type: 'open_gate'; ticket: GateTicket }
  | { type: 'cancel_gates'; tickets: GateTicket[] }
  | { type: 'start_steps'; stepIds: string[] }
  /** Steps whose join can no longer hold: each ends `skipped` (in a body: of that iteration). */
  | { type: 'skip_steps'; stepIds: string[]; loopId?: string; iteration?: number }
  | { type: 'start_body'; loopId: string; iteration: number; stepIds: string[] }
  /** One iteration ended; `done` of `total` have. */
  | { type: 'iteration_done'; loopId: string; iteration: number; done: number; total: number }
  /** Every iteration ended (`ok`), or one failed, or cancel stopped the loop: the executor settles the loop step. */
  | { type: 'loop_done'; loopId: string; ok: boolean; cancelled: boolean }
  | { type: 'finish'; outcome: RunOutcome }
  | { type: 'fail' };

export interface Reduction {
  state: RunState;
  actions: RunAction[];
}

const NO_GRAPH: PlanGraph = planGraph([]);
const NO_LOOPS: ReadonlyMap<string, LoopState> = new Map();

export function initialRunState(maxConcurrency: number, review: boolean): RunState {
  return { phase: 'planning', steps: [], ...emptyScope(NO_GRAPH), loops: NO_LOOPS, gates: [], maxConcurrency, review, cancelRequested: false };
}

/**
 * Whether two settles reduce alike from one state: the same input, or a top-level step's settle
 * asked ahead with its step and outcome (its port aside) and the one then dispatched.
 */
export function sameSettle(a: RunInput, b: RunInput): boolean {
  return a === b || (a.type === 'step_settled' && b.type === 'step_settled' && a.stepId === b.stepId && a.ok === b.ok);
}

/** The run only waits at a gate: executing (or reviewing), a gate queued, no step active, no forEach running, no cancel. */
export function onlyGated(state: RunState): boolean {
  return state.phase !== 'ended' && state.phase !== 'planning' && !state.cancelRequested && state.gates.length > 0 && state.loops.size === 0 && !state.status.includes('active');
}

/** The state of the top-level step `stepId` (undefined when the plan has no such step). */
export function statusOf(state: RunState, stepId: string): StepState | undefined {
  const i = state.graph.at.get(stepId);
  return i === undefined ? undefined : state.status[i];
}

export function reduce(state: RunState, input: RunInput): Reduction {
  if (state.phase === 'ended') return { state, actions: [] };
  switch (input.type) {
    case 'begin':
      if (!input.steps) return { state: { ...state, phase: 'planning' }, actions: [{ type: 'draft_plan' }] };
      return planKnown(...withSteps(state, input.steps, input.done ?? []));
    case 'plan_drafted':
      return planKnown(...withSteps(state, input.steps, input.done ?? []));
    case 'plan_approved': {
      if (state.phase !== 'reviewing') return { state, actions: [] };
      const [next, skipped] = withSteps(state, input.steps, input.done ?? []);
      return advance(dequeue({ ...next, phase: 'executing' }, input.key), skipAction(next, skipped));
    }
    case 'gate_requested':
      return requestGate(state, input.ticket);
    case 'gate_resolved':
      return resolveGate(state, input.key, input.outcome);
    case 'step_settled':
      return settleTop(state, input.stepId, input.ok ? 'done' : 'failed', input.port);
    case 'step_parked': {
      const i = state.graph.at.get(input.stepId);
      if (i === undefined) return { state, actions: [] };
      const s = cloneScope(state);
      setState(s, i, 'pending');
      return advance({ ...state, ...s }, []);
    }
    case 'loop_started':
      return startLoop(state, input.stepId, input.total);
    case 'body_settled':
      return settleBody(state, input.loopId, input.iteration, input.stepId, input.ok ? 'done' : 'failed', input.port);
    case 'body_parked':
      return parkBody(state, input.loopId, input.iteration, input.stepId);
    case 'cancel':
      return cancel(state);
    case 'fail':
      if (state.cancelRequested) return end(state, 'cancelled');
      return { state: { ...state, phase: 'ended', outcome: 'failed', gates: [] }, actions: [{ type: 'fail' }] };
  }
}

/** The state for a (new) plan, with reused steps done; also the positions their ports skipped. */
function withSteps(state: RunState, steps: readonly StepNode[], done: readonly DoneStep[]): [RunState, number[]] {
  const s = cloneScope(emptyScope(planGraph(steps)));
  const skipped: number[] = [];
  const entries = done.map((e) => (typeof e === 'string' ? { id: e, port: undefined } : e)).filter((e) => s.graph.at.has(e.id));
  entries.sort((a, b) => (s.graph.at.get(a.id) as number) - (s.graph.at.get(b.id) as number));
  for (const { id, port } of entries) {
    const i = s.graph.at.get(id) as number;
    // a step a reused branch skipped stays skipped (the branch it hangs on was not taken)
    if (s.status[i] !== 'pending') continue;
    skipped.push(...settleStep(s, i, 'done', port));
  }
  return [{ ...state, steps, ...s, loops: NO_LOOPS }, skipped.filter((i) => s.status[i] === 'skipped')];
}

function skipAction(state: RunState, positions: readonly number[]): RunAction[] {
  if (!positions.length) return [];
  return [{ type: 'skip_steps', stepIds: positions.map((i) => (state.steps[i] as StepNode).id) }];
}

function planKnown(state: RunState, skipped: number[]): Reduction {
  if (state.cancelRequested) return end(state, 'cancelled');
  if (!state.review) return advance({ ...state, phase: 'executing' }, skipAction(state, skipped));
  // skips of reused branches are reported once the plan is approved (it may change meanwhile)
  return requestGate({ ...state, phase: 'reviewing' }, { key: 'plan', kind: 'plan' });
}

function settleTop(state: RunState, stepId: string, end: 'done' | 'failed', port?: string): Reduction {
  const i = state.graph.at.get(stepId);
  const was = i === undefined ? undefined : state.status[i];
  // an unknown step, or a settle repeated for an ended step, changes nothing
  if (i === undefined || was === 'done' || was === 'failed' || was === 'skipped') return { state, actions: [] };
  const s = cloneScope(state);
  const skipped = settleStep(s, i, end, port);
  const next: RunState = { ...state, ...s };
  return advance(next, skipAction(next, skipped), true);
}

function requestGate(state: RunState, ticket: GateTicket): Reduction {
  if (state.cancelRequested) return { state, actions: [{ type: 'cancel_gates', tickets: [ticket] }] };
  const gates = [...state.gates, ticket];
  let next: RunState = { ...state, gates };
  const i = ticket.stepId === undefined ? undefined : state.graph.at.get(ticket.stepId);
  if (i !== undefined && state.status[i] === 'active') {
    const s = cloneScope(state);
    setState(s, i, 'waiting');
    next = { ...next, ...s };
  }
  return { state: next, actions: gates.length === 1 ? [{ type: 'open_gate', ticket }] : [] };
}

function dequeue(state: RunState, key: string): RunState {
  return { ...state, gates: state.gates.filter((g) => g.key !== key) };
}

function resolveGate(state: RunState, key: string, outcome: GateOutcomeKind): Reduction {
  const ticket = state.gates.find((g) => g.key === key);
  if (!ticket) return { state, actions: [] };
  let next = dequeue(state, key);
  if (ticket.kind === 'plan') {
    if (outcome !== 'approved') return end({ ...next, cancelRequested: true }, 'cancelled');
    next = { ...next, phase: 'executing' };
  } else if (ticket.stepId && statusOf(next, ticket.stepId) === 'waiting' && !next.gates.some((g) => g.stepId === ticket.stepId)) {
    const s = cloneScope(next);
    setState(s, next.graph.at.get(ticket.stepId) as number, 'active');
    next = { ...next, ...s };
  }
  const opened: RunAction[] = next.gates[0] && next.gates[0] !== state.gates[0] ? [{ type: 'open_gate', ticket: next.gates[0] }] : [];
  return advance(next, opened);
}

function cancel(state: RunState): Reduction {
  if (state.cancelRequested) return { state, actions: [] };
  if (state.phase !== 'executing') return end({ ...state, cancelRequested: true }, 'cancelled');
  const tickets = [...state.gates];
  const actions: RunAction[] = tickets.length ? [{ type: 'cancel_gates', tickets }] : [];
  let next: RunState = { ...state, cancelRequested: true, gates: [] };
  // a loop with no iteration in flight stops now; the others stop when theirs end
  for (const [loopId, loop] of state.loops) {
    const drained = drainLoop(next, loopId, loop, actions);
    next = drained;
  }
  return advance(next, actions);
}

function end(state: RunState, outcome: RunOutcome): Reduction {
  const tickets = [...state.gates];
  return {
    state: { ...state, phase: 'ended', outcome, gates: [] },
    actions: [...(tickets.length ? [{ type: 'cancel_gates' as const, tickets }] : []), { type: 'finish', outcome }],
  };
}

// ── forEach ─────────────────────────────────────────────────────────────────

function withLoop(state: RunState, loopId: string, loop: LoopState | undefined): RunState {
  const loops = new Map(state.loops);
  if (loop) loops.set(loopId, loop);
  else loops.delete(loopId);
  return { ...state, loops };
}

function startLoop(state: RunState, loopId: string, total: number): Reduction {
  const i = state.graph.at.get(loopId);
  const graph = i === undefined ? undefined : state.graph.bodies[i];
  if (i === undefined || !graph || state.status[i] !== 'active' || state.loops.has(loopId)) return { state, actions: [] };
  const node = state.steps[i] as StepNode;
  const loop: LoopState = { total, next: 0, finished: 0, failed: false, concurrency: Math.max(1, node.concurrency ?? 1), graph, iterations: new Map() };
  const actions: RunAction[] = [];
  const next = admit(withLoop(state, loopId, loop), loopId, actions);
  return { state: next, actions };
}

/** Starts iterations while the loop has room, items left, no failure and no cancel; ends the loop when nothing is left. */
function admit(state: RunState, loopId: string, actions: RunAction[]): RunState {
  let loop = state.loops.get(loopId) as LoopState;
  const iterations = new Map(loop.iterations);
  let nextIndex = loop.next;
  while (!state.cancelRequested && !loop.failed && iterations.size < loop.concurrency && nextIndex < loop.total) {
    const scope = cloneScope(emptyScope(loop.graph));
    const ready = decideIn(scope, false);
    for (const id of ready) scope.started[loop.graph.at.get(id) as number] = true;
    for (const id of ready) setState(scope, loop.graph.at.get(id) as number, 'active');
    iterations.set(nextIndex, scope);
    actions.push({ type: 'start_body', loopId, iteration: nextIndex, stepIds: ready });
    nextIndex += 1;
  }
  loop = { ...loop, next: nextIndex, iterations };
  return drainLoop(state, loopId, loop, actions);
}

/** Ends the loop when no iteration is in flight and none will start: `loop_done`. */
function drainLoop(state: RunState, loopId: string, loop: LoopState, actions: RunAction[]): RunState {
  const stopped = state.cancelRequested || loop.failed;
  if (loop.iterations.size > 0 || (!stopped && loop.next < loop.total)) return withLoop(state, loopId, loop);
  actions.push({ type: 'loop_done', loopId, ok: !stopped, cancelled: state.cancelRequested && !loop.failed });
  return withLoop(state, loopId, undefined);
}

/** The body steps of a scope to start now (every ready one: the loop's concurrency bounds iterations, not steps). */
function decideIn(scope: Scope, cancelRequested: boolean): string[] {
  const nodes = scope.graph.nodes;
  const d = decide({ steps: nodes, status: { get: (_id, index) => plainStatus(scope.status[index ?? -1]) }, maxConcurrency: nodes.length, cancelRequested, counts: scope.counts, unmet: scope.unmet });
  return d.kind === 'launch' ? d.stepIds : [];
}

function plainStatus(st: StepState | undefined) {
  return st === 'waiting' ? 'active' : st;
}

function settleBody(state: RunState, loopId: string, iteration: number, stepId: string, endState: 'done' | 'failed', port?: string): Reduction {
  const loop = state.loops.get(loopId);
  const current = loop?.iterations.get(iteration);
  const i = loop?.graph.at.get(stepId);
  if (!loop || !current || i === undefined || current.status[i] !== 'active') return { state, actions: [] };
  const scope = cloneScope(current);
  const actions: RunAction[] = [];
  const skipped = settleStep(scope, i, endState, port);
  if (skipped.length) actions.push({ type: 'skip_steps', loopId, iteration, stepIds: skipped.map((k) => (loop.graph.nodes[k] as StepNode).id) });
  return continueIteration(state, loopId, { ...loop, failed: loop.failed || scope.status[i] === 'failed' }, iteration, scope, actions);
}

function parkBody(state: RunState, loopId: string, iteration: number, stepId: string): Reduction {
  const loop = state.loops.get(loopId);
  const current = loop?.iterations.get(iteration);
  const i = loop?.graph.at.get(stepId);
  if (!loop || !current || i === undefined) return { state, actions: [] };
  const scope = cloneScope(current);
  setState(scope, i, 'pending');
  return continueIteration(state, loopId, loop, iteration, scope, []);
}

/** After a change in one iteration: start its ready steps, or end it (and admit the next), or end the loop. */
function continueIteration(state: RunState, loopId: string, loop: LoopState, iteration: number, scope: MutableScope, actions: RunAction[]): Reduction {
  const stopping = state.cancelRequested || loop.failed;
  const ready = stopping ? [] : decideIn(scope, false).filter((id) => !scope.started[loop.graph.at.get(id) as number]);
  for (const id of ready) {
    const k = loop.graph.at.get(id) as number;
    scope.started[k] = true;
    setState(scope, k, 'active');
  }
  if (ready.length) actions.push({ type: 'start_body', loopId, iteration, stepIds: ready });
  const iterations = new Map(loop.iterations);
  let next = loop;
  if (scopeSettled(scope) || (stopping && scope.counts.active === 0)) {
    iterations.delete(iteration);
    next = { ...loop, iterations, finished: loop.finished + 1 };
    if (scopeSettled(scope) && scope.counts.failed === 0) actions.push({ type: 'iteration_done', loopId, iteration, done: next.finished, total: loop.total });
    const admitted = admit(withLoop(state, loopId, next), loopId, actions);
    return advance(admitted, actions);
  }
  iterations.set(iteration, scope);
  return { state: withLoop(state, loopId, { ...next, iterations }), actions };
}

// ── starting top-level steps ────────────────────────────────────────────────

/**
 * After any change while executing: start what is ready, or finish. `owned`: `state`'s arrays
 * were made by this reduction (no caller holds them yet), so the starts are recorded in them.
 */
function advance(state: RunState, actions: RunAction[], owned = false): Reduction {
  if (state.phase !== 'executing') return { state, actions };
  const next = decide({
    steps: state.steps,
    status: { get: (id, index) => plainStatus(state.status[index ?? state.graph.at.get(id) ?? -1]) },
    maxConcurrency: state.maxConcurrency,
    cancelRequested: state.cancelRequested,
    counts: state.counts,
    unmet: state.unmet,
  });
  if (next.kind === 'finish') {
    const ended = end(state, next.outcome);
    return { state: ended.state, actions: [...actions, ...ended.actions] };
  }
  if (next.kind === 'wait') return { state, actions };
  const at = next.stepIds.map((id) => state.graph.at.get(id) as number);
  if (at.some((i) => state.started[i])) return { state, actions };
  const s: MutableScope = owned ? (state as unknown as MutableScope) : cloneScope(state);
  for (const i of at) {
    setState(s, i, 'active');
    s.started[i] = true;
  }
  return { state: { ...state, ...s, graph: state.graph }, actions: [...actions, { type: 'start_steps', stepIds: next.stepIds }] };
}
