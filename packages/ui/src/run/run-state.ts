import { type AgentPlan, type FailedStep, type RunEventType, type RunStatus, stepKind } from '@fengyu/protocol';
import { announcedTotal, applyBodyEvent, type LoopView, withTotal } from './loop-state';

/**
 * The run panel's state as a pure fold over the run's SSE events. The same fold serves
 * a live run and a reopened one (the stream replays every persisted event first).
 */

export type StepStatus = 'pending' | 'running' | 'awaiting_approval' | 'done' | 'failed' | 'skipped';

export interface StepView {
  id: string;
  index: number;
  title?: string;
  tool?: string;
  status: StepStatus;
  arguments?: unknown;
  result?: unknown;
  hasResult: boolean;
  error?: string;
  attempts?: number;
  durationMs?: number;
  pinned?: boolean;
  /** The result was carried over from the run this one retries (`step_complete` with `reused: true`). */
  reused?: boolean;
  /** A forEach body step: its loop. */
  parentStepId?: string;
}

export interface Gate {
  kind: 'plan' | 'step' | 'input';
  gateId: string;
  stepId?: string;
  reason?: string;
  /** An input step's title, form and expiry. */
  title?: string;
  form?: Record<string, unknown>;
  expiresAt?: string;
  /** A step gate: the tool and the step's resolved arguments (what approving lets run). */
  tool?: string;
  arguments?: unknown;
}

export interface RunView {
  runId: string;
  status: RunStatus | 'connecting';
  plan?: AgentPlan;
  planText: string;
  steps: StepView[];
  gate?: Gate;
  summary?: string;
  result?: unknown;
  error?: string;
  lastSeq: number;
  ended: boolean;
  /** forEach progress by loop step id. */
  loops: Record<string, LoopView>;
  /** Steps that failed without failing the run (`onError` continue or branch), from `complete`. */
  failedSteps: FailedStep[];
}

/** The well-formed entries of a `failedSteps` list (from an event or a run detail): each names its step and carries its error. */
export function failedStepsOf(value: unknown): FailedStep[] {
  if (!Array.isArray(value)) return [];
  return value.filter((f): f is FailedStep => !!f && typeof f === 'object' && typeof (f as FailedStep).stepId === 'string' && !!(f as FailedStep).error && typeof (f as FailedStep).error === 'object');
}

/** A failed step's error as one line: `message (code)`. */
export function failedStepText(f: FailedStep): string {
  const { code, message } = f.error;
  return message && code ? `${message} (${code})` : message || code || '';
}

export function initialRun(runId: string): RunView {
  return { runId, status: 'connecting', planText: '', steps: [], lastSeq: 0, ended: false, loops: {}, failedSteps: [] };
}

export interface RawEvent {
  type: string;
  seq?: number;
  [k: string]: unknown;
}

/** The run's steps from its plan: top-level steps, each forEach followed by its body steps. */
function withPlan(view: RunView, plan: AgentPlan): RunView {
  const prev = new Map(view.steps.map((s) => [s.id, s]));
  const flat = plan.steps.flatMap((s) => [{ s, parent: undefined as string | undefined }, ...(s.steps ?? []).map((b) => ({ s: b, parent: s.id }))]);
  const steps = flat.map(
    ({ s, parent }, index): StepView => prev.get(s.id) ?? { id: s.id, index, title: s.title, tool: s.tool, status: 'pending', hasResult: false, pinned: !!s.pinned, ...(parent ? { parentStepId: parent } : {}) },
  );
  return { ...view, plan, steps };
}

/** A body step's event (it carries `iteration` and `parentStepId`). */
const isBodyEvent = (e: RawEvent): boolean => typeof e.parentStepId === 'string' && typeof e.iteration === 'number';

/** Loop bookkeeping of a step event: a body step's iteration, or a loop's announced size. */
function trackLoops(v: RunView, e: RawEvent): RunView {
  if (isBodyEvent(e)) return { ...v, loops: applyBodyEvent(v.loops, v.plan, e) };
  const step = v.plan?.steps.find((s) => s.id === e.stepId);
  const total = step && stepKind(step) === 'forEach' ? announcedTotal(e) : undefined;
  return total === undefined ? v : { ...v, loops: withTotal(v.loops, String(e.stepId), total) };
}

function patchStep(view: RunView, stepId: string, patch: Partial<StepView>): RunView {
  const exists = view.steps.some((s) => s.id === stepId);
  const steps = exists
    ? view.steps.map((s) => (s.id === stepId ? { ...s, ...patch } : s))
    : [...view.steps, { id: stepId, index: view.steps.length, status: 'pending' as StepStatus, hasResult: false, ...patch }];
  return { ...view, steps };
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export function applyEvent(view: RunView, e: RawEvent): RunView {
  const seq = typeof e.seq === 'number' ? e.seq : view.lastSeq;
  if (typeof e.seq === 'number' && e.seq <= view.lastSeq && view.lastSeq > 0) return view; // replayed duplicate
  let v: RunView = { ...view, lastSeq: seq };
  if (e.type === 'step_start' || e.type === 'step_complete') v = trackLoops(v, e);
  switch (e.type) {
    case 'run_created':
      return { ...v, status: (e.status as RunStatus) ?? v.status };
    case 'plan_token':
      return { ...v, status: 'planning', planText: v.planText + (str(e.text) ?? '') };
    case 'plan_ready':
      return withPlan(v, e.plan as AgentPlan);
    case 'plan_approval_requested':
      v = withPlan(v, e.plan as AgentPlan);
      return { ...v, status: 'awaiting_plan_approval', gate: { kind: 'plan', gateId: String(e.gateId) } };
    case 'plan_approved':
      v = e.plan ? withPlan(v, e.plan as AgentPlan) : v;
      return { ...v, status: 'running', gate: undefined };
    case 'step_start':
      // a start without a title keeps the plan's (the approval card and the list name steps by it)
      return { ...patchStep(v, String(e.stepId), { status: 'running', arguments: e.arguments, ...(str(e.title) ? { title: str(e.title) } : {}), tool: str(e.tool), pinned: !!e.pinned }), status: 'running' };
    case 'step_approval_requested':
      v = patchStep(v, String(e.stepId), { status: 'awaiting_approval' });
      return { ...v, status: 'awaiting_step_approval', gate: { kind: 'step', gateId: String(e.gateId), stepId: String(e.stepId), reason: str(e.reason), tool: str(e.tool), arguments: e.arguments } };
    case 'step_approved':
      return { ...patchStep(v, String(e.stepId), { status: 'running' }), status: 'running', gate: undefined };
    case 'input_requested':
      v = patchStep(v, String(e.stepId), { status: 'awaiting_approval' });
      return { ...v, status: 'awaiting_input', gate: { kind: 'input', gateId: String(e.gateId), stepId: String(e.stepId), title: str(e.title), form: e.form as Record<string, unknown>, expiresAt: str(e.expiresAt) } };
    case 'input_received':
      return { ...patchStep(v, String(e.stepId), { status: 'running' }), status: 'running', gate: undefined };
    case 'step_complete': {
      const status = (['done', 'failed', 'skipped'].includes(String(e.status)) ? e.status : 'done') as StepStatus;
      return patchStep(v, String(e.stepId), {
        status,
        hasResult: 'result' in e && e.result !== undefined,
        result: e.result,
        error: str(e.error),
        attempts: typeof e.attempts === 'number' ? e.attempts : undefined,
        durationMs: typeof e.durationMs === 'number' ? e.durationMs : undefined,
        reused: e.reused === true,
      });
    }
    case 'complete':
      return { ...v, status: 'completed', summary: str(e.summary), result: e.result, gate: undefined, ended: true, failedSteps: failedStepsOf(e.failedSteps) };
    case 'error':
      return { ...v, status: 'failed', error: str(e.message), gate: undefined, ended: true };
    case 'cancelled':
      return { ...v, status: 'cancelled', gate: undefined, ended: true };
    case 'interrupted':
      return { ...v, status: 'interrupted', error: str(e.reason), gate: undefined, ended: true };
    default:
      return v;
  }
}

export const STREAM_EVENT_TYPES = [
  'run_created',
  'plan_token',
  'plan_ready',
  'plan_approval_requested',
  'plan_approved',
  'step_start',
  'step_approval_requested',
  'step_approved',
  'input_requested',
  'input_received',
  'tool',
  'step_retry',
  'step_complete',
  'audit',
  'cancel_requested',
  'complete',
  'error',
  'cancelled',
  'interrupted',
] as const satisfies readonly RunEventType[];

export type RunBadge = 'running' | 'awaiting' | 'done' | 'failed' | 'skipped';

/** Badge status of a canvas node from the run's step: a step held at its approval gate is not running. */
export function badgeOf(step: StepView | undefined): RunBadge | undefined {
  if (!step) return undefined;
  if (step.status === 'awaiting_approval') return 'awaiting';
  if (step.status === 'running') return 'running';
  if (step.status === 'done') return 'done';
  if (step.status === 'failed') return 'failed';
  if (step.status === 'skipped') return 'skipped';
  return undefined;
}
