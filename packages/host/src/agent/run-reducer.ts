/**
 * The runner's core: one pure function `reduce(state, event) → { state, actions }`. It owns the
 * run's phase, each step's state, the queue of approval gates and cancellation, and says what to
 * do next (draft the plan, open this gate, start these steps, finish the run). It does no I/O,
 * reads no clock and mutates nothing it is given; `run-executor.ts` performs the actions and
 * feeds back what happened.
 *
 *   begin ─┬─(no plan)→ planning ──plan_drafted──┐
 *          └─(plan)─────────────────────────────┴→ reviewing (plan gate) ─approved→ executing
 *                                                 └─(no review)──────────────────→ executing
 *   executing: start ready steps (dependencies done, within maxConcurrency) → step_settled …
 *   a step gate parks only its own step (waiting) until gate_resolved; cancel stops new starts;
 *   the run finishes when every step is done, or a step failed / cancel arrived and none is active.
 */

import { decide, type StepStatus } from './decide';

export type StepState = 'pending' | 'active' | 'waiting' | 'done' | 'failed';
export type RunPhase = 'planning' | 'reviewing' | 'executing' | 'ended';
export type RunOutcome = 'completed' | 'failed' | 'cancelled';
export type GateOutcomeKind = 'approved' | 'rejected' | 'cancelled';

export interface StepNode {
  id: string;
  dependsOn: readonly string[];
}

/** A request for approval: the plan gate, or a gate of one step (queued in request order). */
export interface GateTicket {
  key: string;
  kind: 'plan' | 'step';
  stepId?: string;
}

export interface RunState {
  phase: RunPhase;
  steps: readonly StepNode[];
  /** The plan's graph, made once per plan: each step's position, dependents and prerequisite count. */
  graph: PlanGraph;
  /** Each step's state, by its position in `steps` (`statusOf` reads it by id). */
  status: readonly StepState[];
  /** How many of each step's prerequisites are not done, by position: a pending step with none is ready. */
  unmet: readonly number[];
  /** How many of `steps` are active or waiting (`active`), done and failed: kept with every change of `status`. */
  counts: Readonly<StepCounts>;
  /** Whether each step (by position) was started in this attempt (a step starts at most once). */
  started: readonly boolean[];
  /** Gates in request order; the first is the open one. */
  gates: readonly GateTicket[];
  maxConcurrency: number;
  review: boolean;
  cancelRequested: boolean;
  outcome?: RunOutcome;
}

export type RunInput =
  /** The run begins; `steps` is the plan if known; `done` are reused completed steps. */
  | { type: 'begin'; steps?: readonly StepNode[]; done?: readonly string[] }
  | { type: 'plan_drafted'; steps: readonly StepNode[]; done?: readonly string[] }
  /** The plan gate was approved, possibly with an edited plan; `done` are reused steps. */
  | { type: 'plan_approved'; key: string; steps: readonly StepNode[]; done?: readonly string[] }
  | { type: 'gate_requested'; ticket: GateTicket }
  | { type: 'gate_resolved'; key: string; outcome: GateOutcomeKind }
  | { type: 'step_settled'; stepId: string; ok: boolean }
  /** A started step stopped before running (its gate was cancelled): it is pending again. */
  | { type: 'step_parked'; stepId: string }
  | { type: 'cancel' }
  /** The run failed outside of a step (planning, an invalid edited plan, storage). */
  | { type: 'fail' };

export type RunAction =
  | { type: 'draft_plan' }
  | { type: 'open_gate'; ticket: GateTicket }
  | { type: 'cancel_gates'; tickets: GateTicket[] }
  | { type: 'start_steps'; stepIds: string[] }
  | { type: 'finish'; outcome: RunOutcome }
  | { type: 'fail' };

export interface Reduction {
  state: RunState;
  actions: RunAction[];
}

export interface StepCounts {
  active: number;
  done: number;
  failed: number;
}

/**
 * A plan's dependency graph by step position: `at` maps an id to its position, `dependents` lists
 * the steps that name each step as a prerequisite, `needs` counts each step's distinct
 * prerequisites (an unknown one is counted and never met: that step never becomes ready).
 */
export interface PlanGraph {
  at: ReadonlyMap<string, number>;
  dependents: readonly (readonly number[])[];
  needs: readonly number[];
}

const NO_GRAPH: PlanGraph = { at: new Map(), dependents: [], needs: [] };

export function planGraph(steps: readonly StepNode[]): PlanGraph {
  const at = new Map<string, number>();
  steps.forEach((s, i) => {
    if (!at.has(s.id)) at.set(s.id, i);
  });
  const dependents: number[][] = steps.map(() => []);
  const needs = steps.map((s, i) => {
    const distinct = new Set(s.dependsOn);
    for (const d of distinct) {
      const j = at.get(d);
      if (j !== undefined) dependents[j]?.push(i);
    }
    return distinct.size;
  });
  return { at, dependents, needs };
}

export function initialRunState(maxConcurrency: number, review: boolean): RunState {
  return { phase: 'planning', steps: [], graph: NO_GRAPH, status: [], unmet: [], counts: { active: 0, done: 0, failed: 0 }, started: [], gates: [], maxConcurrency, review, cancelRequested: false };
}

/** The state of the step `stepId` (undefined when the plan has no such step). */
export function statusOf(state: RunState, stepId: string): StepState | undefined {
  const i = state.graph.at.get(stepId);
  return i === undefined ? undefined : state.status[i];
}

/** Adds `by` to the count `state` belongs to (a waiting step holds its slot: it counts as active). */
function count(counts: StepCounts, state: StepState | undefined, by: number): void {
  if (state === 'active' || state === 'waiting') counts.active += by;
  else if (state === 'done') counts.done += by;
  else if (state === 'failed') counts.failed += by;
}

export function reduce(state: RunState, input: RunInput): Reduction {
  if (state.phase === 'ended') return { state, actions: [] };
  switch (input.type) {
    case 'begin':
      return input.steps ? planKnown(withSteps(state, input.steps, input.done ?? [])) : { state: { ...state, phase: 'planning' }, actions: [{ type: 'draft_plan' }] };
    case 'plan_drafted':
      return planKnown(withSteps(state, input.steps, input.done ?? []));
    case 'plan_approved':
      if (state.phase !== 'reviewing') return { state, actions: [] };
      return advance(dequeue({ ...withSteps(state, input.steps, input.done ?? []), phase: 'executing' }, input.key), []);
    case 'gate_requested':
      return requestGate(state, input.ticket);
    case 'gate_resolved':
      return resolveGate(state, input.key, input.outcome);
    case 'step_settled': {
      const next = setStatus(state, input.stepId, input.ok ? 'done' : 'failed');
      return advance(next, [], next !== state);
    }
    case 'step_parked': {
      const next = setStatus(state, input.stepId, 'pending');
      return advance(next, [], next !== state);
    }
    case 'cancel':
      return cancel(state);
    case 'fail':
      if (state.cancelRequested) return end(state, 'cancelled');
      return { state: { ...state, phase: 'ended', outcome: 'failed', gates: [] }, actions: [{ type: 'fail' }] };
  }
}

function withSteps(state: RunState, steps: readonly StepNode[], done: readonly string[]): RunState {
  const graph = planGraph(steps);
  const status: StepState[] = steps.map(() => 'pending');
  const unmet = [...graph.needs];
  const counts = { active: 0, done: 0, failed: 0 };
  for (const id of new Set(done)) {
    const i = graph.at.get(id);
    if (i === undefined || status[i] === 'done') continue;
    status[i] = 'done';
    counts.done += 1;
    for (const j of graph.dependents[i] ?? []) unmet[j] = (unmet[j] as number) - 1;
  }
  return { ...state, steps, graph, status, unmet, counts, started: steps.map(() => false) };
}

/** The state with step `stepId` in state `next`; the same state when the plan has no such step. */
function setStatus(state: RunState, stepId: string, next: StepState): RunState {
  const i = state.graph.at.get(stepId);
  if (i === undefined) return state;
  const before = state.status[i];
  const status = [...state.status];
  status[i] = next;
  const counts = { ...state.counts };
  count(counts, before, -1);
  count(counts, next, 1);
  // a step that becomes done (or stops being done) meets (or unmeets) a prerequisite of its dependents
  const by = next === 'done' ? (before === 'done' ? 0 : -1) : before === 'done' ? 1 : 0;
  if (by === 0) return { ...state, status, counts };
  const unmet = [...state.unmet];
  for (const j of state.graph.dependents[i] ?? []) unmet[j] = (unmet[j] as number) + by;
  return { ...state, status, counts, unmet };
}

function planKnown(state: RunState): Reduction {
  if (state.cancelRequested) return end(state, 'cancelled');
  if (!state.review) return advance({ ...state, phase: 'executing' }, []);
  return requestGate({ ...state, phase: 'reviewing' }, { key: 'plan', kind: 'plan' });
}

function requestGate(state: RunState, ticket: GateTicket): Reduction {
  if (state.cancelRequested) return { state, actions: [{ type: 'cancel_gates', tickets: [ticket] }] };
  const gates = [...state.gates, ticket];
  const parked = ticket.stepId && statusOf(state, ticket.stepId) === 'active' ? setStatus(state, ticket.stepId, 'waiting') : state;
  const next = { ...parked, gates };
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
    next = setStatus(next, ticket.stepId, 'active');
  }
  const opened: RunAction[] = next.gates[0] && next.gates[0] !== state.gates[0] ? [{ type: 'open_gate', ticket: next.gates[0] }] : [];
  return advance(next, opened);
}

function cancel(state: RunState): Reduction {
  if (state.cancelRequested) return { state, actions: [] };
  if (state.phase !== 'executing') return end({ ...state, cancelRequested: true }, 'cancelled');
  const tickets = [...state.gates];
  const actions: RunAction[] = tickets.length ? [{ type: 'cancel_gates', tickets }] : [];
  return advance({ ...state, cancelRequested: true, gates: [] }, actions);
}

function end(state: RunState, outcome: RunOutcome): Reduction {
  const tickets = [...state.gates];
  return {
    state: { ...state, phase: 'ended', outcome, gates: [] },
    actions: [...(tickets.length ? [{ type: 'cancel_gates' as const, tickets }] : []), { type: 'finish', outcome }],
  };
}

/**
 * After any change while executing: start what is ready, or finish. `owned`: `state.status` was
 * made by this reduction (no caller holds it yet), so the starts are recorded in it, not in a copy.
 */
function advance(state: RunState, actions: RunAction[], owned = false): Reduction {
  if (state.phase !== 'executing') return { state, actions };
  const next = decideNext(state);
  if (next.kind === 'finish') {
    const ended = end(state, next.outcome);
    return { state: ended.state, actions: [...actions, ...ended.actions] };
  }
  if (next.kind === 'wait') return { state, actions };
  const at = next.stepIds.map((id) => state.graph.at.get(id) as number);
  if (at.some((i) => state.started[i])) return { state, actions };
  const status = owned ? (state.status as StepState[]) : [...state.status];
  const started = [...state.started];
  const counts = { ...state.counts };
  for (const i of at) {
    count(counts, status[i], -1);
    status[i] = 'active';
    counts.active += 1;
    started[i] = true;
  }
  return { state: { ...state, status, started, counts }, actions: [...actions, { type: 'start_steps', stepIds: next.stepIds }] };
}

/** The step-readiness decision of `decide.ts`, on this state (a waiting step holds its slot). */
function decideNext(state: RunState) {
  const { status: all, graph } = state;
  const status = {
    get: (id: string, index?: number): StepStatus | undefined => {
      const st = all[index ?? graph.at.get(id) ?? -1];
      return st === 'waiting' ? 'active' : st;
    },
  };
  return decide({ steps: state.steps, status, maxConcurrency: state.maxConcurrency, cancelRequested: state.cancelRequested, counts: state.counts, unmet: state.unmet });
}
