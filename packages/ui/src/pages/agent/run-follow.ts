import type { RunEventType } from '@fengyu/protocol';
import { onBeforeUnmount, ref, shallowRef } from 'vue';
import { applyEvent, initialRun, type RawEvent, type RunView, STREAM_EVENT_TYPES } from '../../run/run-state';
import { openRunEvents } from '../../run/run-stream';

/**
 * The Agent page's view of a run: the run panel's fold (`run/run-state.ts`, shared with the
 * Flows builder) plus what this page shows on top — the step gate's tool, arguments and effect,
 * step start times (live durations), audit events and tool calls.
 */

export interface GateDetail {
  gateId: string;
  stepId: string;
  tool?: string;
  arguments?: unknown;
  effect?: string;
  reason?: string;
}

export interface AgentRunState {
  view: RunView;
  gate?: GateDetail;
  startedAt: Record<string, string>;
  audits: RawEvent[];
}

export const AGENT_EVENT_TYPES = [...STREAM_EVENT_TYPES, 'resumed'] as const satisfies readonly RunEventType[];

export function initialAgentRun(runId: string): AgentRunState {
  return { view: initialRun(runId), startedAt: {}, audits: [] };
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

export function applyAgentEvent(state: AgentRunState, e: RawEvent): AgentRunState {
  if (typeof e.seq === 'number' && e.seq <= state.view.lastSeq && state.view.lastSeq > 0) return state;
  let view = applyEvent(state.view, e);
  let gate = state.gate;
  let startedAt = state.startedAt;
  let audits = state.audits;
  switch (e.type) {
    case 'step_approval_requested':
      gate = { gateId: String(e.gateId), stepId: String(e.stepId), tool: str(e.tool), arguments: e.arguments, effect: str(e.effect), reason: str(e.reason) };
      break;
    case 'step_approved':
      gate = undefined;
      break;
    case 'step_start':
      if (typeof e.ts === 'string') startedAt = { ...startedAt, [String(e.stepId)]: e.ts };
      break;
    case 'audit':
      audits = [...audits, e];
      if (e.kind === 'step_rejected') {
        gate = undefined;
        view = { ...view, gate: undefined, status: view.status === 'awaiting_step_approval' ? 'running' : view.status };
      }
      // an input that expired without defaults: its step fails, the run goes on or ends
      if (e.kind === 'gate_expired' && view.gate?.kind === 'input') {
        view = { ...view, gate: undefined, status: view.status === 'awaiting_input' ? 'running' : view.status };
      }
      break;
    case 'resumed':
      view = { ...view, ended: false, error: undefined };
      break;
    default:
      if (view.ended || !view.gate) gate = undefined;
  }
  return { view, gate, startedAt, audits };
}

/** Steps done (or skipped) out of the plan's total, for the progress bar. */
export function progressOf(view: RunView): { done: number; total: number; failed: number } {
  const total = view.plan?.steps.length ?? view.steps.length;
  const done = view.steps.filter((s) => s.status === 'done' || s.status === 'skipped').length;
  const failed = view.steps.filter((s) => s.status === 'failed').length;
  return { done, total, failed };
}

export function isActiveStatus(status: string): boolean {
  return ['connecting', 'planning', 'awaiting_plan_approval', 'running', 'awaiting_step_approval', 'awaiting_input'].includes(status);
}

/** Follows `runId` over SSE for as long as the calling component lives. */
export function useAgentRun(streamUrl: () => string, runId: string, Source: typeof EventSource = EventSource) {
  const state = shallowRef<AgentRunState>(initialAgentRun(runId));
  const lost = ref(false);
  let es: EventSource | undefined;
  const open = () => {
    es?.close();
    lost.value = false;
    es = openRunEvents(
      streamUrl(),
      AGENT_EVENT_TYPES,
      (event) => {
        state.value = applyAgentEvent(state.value, event);
      },
      Source,
    );
    es.onerror = () => {
      if (es?.readyState === 2 && !state.value.view.ended) lost.value = true;
    };
  };
  open();
  onBeforeUnmount(() => es?.close());
  return { state, lost, reconnect: open };
}
