import type { AgentPlan, PlanStep } from '@fengyu/protocol';
import type { CatalogSnapshot } from '../tools/catalog';
import type { FileGrant } from '../tools/tool';
import type { PermissionGuard } from '../permissions/types';

/**
 * Seams the models domain fills: drafting a plan from a goal, running a model step, and
 * writing the run summary. With none configured, goal-only runs answer `no_chat_backend` and
 * model steps fail with the same code.
 */

export interface PlanRequest {
  owner: string;
  goal: string;
  backend?: string;
  model?: string;
  catalog: CatalogSnapshot;
  inputs: Record<string, unknown>;
  signal: AbortSignal;
  /** Streams the model's text as it arrives (each chunk becomes a `plan_token` frame). */
  onToken: (text: string) => void;
}

export interface Planner {
  /** True when a chat backend is configured for this owner (and `backend`, if named). */
  available(owner: string, backend?: string): Promise<boolean>;
  /** The answer of `available` when it is at hand without a lookup (the owner's settings already read); else undefined. */
  availableNow?(owner: string, backend?: string): boolean | undefined;
  /** Drafts a plan. The host validates it; `repair` is called once with the problems if invalid. */
  draft(req: PlanRequest): Promise<unknown>;
  repair(req: PlanRequest, draft: unknown, problems: string[]): Promise<unknown>;
  /** A short model-written summary of a finished run; undefined when no backend. */
  summarize?(req: { owner: string; goal?: string; plan: AgentPlan; results: Record<string, unknown>; backend?: string; model?: string; signal: AbortSignal }): Promise<string | undefined>;
}

export interface ModelStepRequest {
  owner: string;
  runId: string;
  step: PlanStep;
  /** The step's instruction with references resolved. */
  instruction: string;
  backend?: string;
  model?: string;
  catalog: CatalogSnapshot;
  guard: PermissionGuard;
  permissionMode: import('@fengyu/protocol').PermissionMode;
  grants: readonly FileGrant[];
  signal: AbortSignal;
  /** Emits `tool` events (call/result) and audit records into the run log. */
  emit: (type: 'tool' | 'audit', payload: Record<string, unknown>) => void;
  /** Asks the human through the run's step gate (the same mechanism as plan steps). */
  askApproval: (reason: string, detail: { tool: string; arguments: unknown; effect: string }) => Promise<boolean>;
}

/** A model condition's question: the instruction and the cases to pick from. */
export interface ModelChoiceRequest {
  owner: string;
  runId: string;
  /** The condition's instruction with references resolved. */
  instruction: string;
  cases: { name: string; description: string }[];
  backend?: string;
  model?: string;
  signal: AbortSignal;
}

export interface ModelStepRunner {
  run(req: ModelStepRequest): Promise<unknown>;
  /** Asks the model to pick one case (no tools offered); answers the model's raw text. */
  choose?(req: ModelChoiceRequest): Promise<string>;
}
