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
  status: Readonly<Record<string, StepState>>;
  /** How many of `steps` are active or waiting (`active`), done and failed: kept with every change of `status`. */
  counts: Readonly<StepCounts>;
  /** How many times each step was started in this attempt (never above 1). */
  starts: Readonly<Record<string, number>>;
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

export function initialRunState(maxConcurrency: number, review: boolean): RunState {
  return { phase: 'planning', steps: [], status: {}, counts: { active: 0, done: 0, failed: 0 }, starts: {}, gates: [], maxConcurrency, review, cancelRequested: false };
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
  const finished = new Set(done);
  const status: Record<string, StepState> = {};
  const counts = { active: 0, done: 0, failed: 0 };
  for (const s of steps) {
    status[s.id] = finished.has(s.id) ? 'done' : 'pending';
    count(counts, status[s.id], 1);
  }
  return { ...state, steps, status, counts };
}

function setStatus(state: RunState, stepId: string, next: StepState): RunState {
  if (!(stepId in state.status)) return state;
  const counts = { ...state.counts };
  count(counts, state.status[stepId], -1);
  count(counts, next, 1);
  return { ...state, status: { ...state.status, [stepId]: next }, counts };
}

function planKnown(state: RunState): Reduction {
  if (state.cancelRequested) return end(state, 'cancelled');
  if (!state.review) return advance({ ...state, phase: 'executing' }, []);
  return requestGate({ ...state, phase: 'reviewing' }, { key: 'plan', kind: 'plan' });
}

function requestGate(state: RunState, ticket: GateTicket): Reduction {
  if (state.cancelRequested) return { state, actions: [{ type: 'cancel_gates', tickets: [ticket] }] };
  const gates = [...state.gates, ticket];
  const parked = ticket.stepId && state.status[ticket.stepId] === 'active' ? setStatus(state, ticket.stepId, 'waiting') : state;
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
  } else if (ticket.stepId && next.status[ticket.stepId] === 'waiting' && !next.gates.some((g) => g.stepId === ticket.stepId)) {
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
  if (next.stepIds.some((id) => (state.starts[id] ?? 0) > 0)) return { state, actions };
  const status = owned ? (state.status as Record<string, StepState>) : { ...state.status };
  const starts = { ...state.starts };
  const counts = { ...state.counts };
  for (const id of next.stepIds) {
    count(counts, status[id], -1);
    status[id] = 'active';
    counts.active += 1;
    starts[id] = (starts[id] ?? 0) + 1;
  }
  return { state: { ...state, status, starts, counts }, actions: [...actions, { type: 'start_steps', stepIds: next.stepIds }] };
}

/** The step-readiness decision of `decide.ts`, on this state (a waiting step holds its slot). */
function decideNext(state: RunState) {
  const all = state.status;
  const status = {
    get: (id: string): StepStatus | undefined => {
      const st = Object.hasOwn(all, id) ? all[id] : undefined;
      return st === 'waiting' ? 'active' : st;
    },
  };
  return decide({ steps: state.steps, status, maxConcurrency: state.maxConcurrency, cancelRequested: state.cancelRequested, counts: state.counts });
}
