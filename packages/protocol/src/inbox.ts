import type { AgentPlan } from './plan';

/**
 * The inbox: every pending plan gate, step gate and input of an owner's runs, however
 * they were started. One shape for the REST list, the stream, the CLI and the UI.
 */

export type InboxItemKind = 'plan_approval' | 'step_approval' | 'input';
/** How the run that waits was started. */
export type InboxTrigger = 'manual' | 'task' | 'schedule' | 'webhook' | 'tool' | 'chat' | 'mcp';
/** How an item left the inbox. */
export type InboxOutcome = 'answered' | 'expired' | 'cancelled';

export const INBOX_ITEM_KINDS: readonly InboxItemKind[] = Object.freeze(['plan_approval', 'step_approval', 'input'] as InboxItemKind[]);

/** Approvals in a run nobody watches expire after this long (inputs after their own `timeoutMs`). */
export const APPROVAL_GATE_TTL_MS = 24 * 3600 * 1000;

export interface InboxItem {
  /** The gate's id (the `gateId` of the run's `*_requested` event). */
  id: string;
  kind: InboxItemKind;
  runId: string;
  stepId?: string;
  title: string;
  workflowId?: string;
  workflowName?: string;
  trigger: InboxTrigger;
  /** ISO-8601 UTC. */
  createdAt: string;
  expiresAt?: string;
  /** An input's form (a JSON Schema of type object). */
  form?: Record<string, unknown>;
  /** A plan gate's plan (secret values redacted). */
  plan?: AgentPlan;
  /** Why a step asks for approval. */
  reason?: string;
  /** A step gate's tool call, as the run event shows it. */
  detail?: { tool?: string; arguments?: unknown; effect?: string };
}

export interface InboxPage {
  items: InboxItem[];
  nextCursor?: string;
}

/** Frames of `GET /api/inbox/stream`. */
export interface InboxFrames {
  inbox_added: { item: InboxItem };
  inbox_removed: { id: string; outcome: InboxOutcome };
}

/** The run's `origin` (how it was started) as the inbox names it. */
export function inboxTrigger(origin: string | null | undefined): InboxTrigger {
  switch (origin) {
    case 'task':
      return 'task';
    case 'workflow-schedule':
      return 'schedule';
    case 'workflow-webhook':
      return 'webhook';
    case 'workflow-tool':
      return 'tool';
    case 'chat':
      return 'chat';
    case 'mcp':
      return 'mcp';
    default:
      return 'manual';
  }
}

/** Whether nobody watches a run started so: its approvals wait in the inbox and expire. */
export function isUnattended(trigger: InboxTrigger): boolean {
  return trigger !== 'manual' && trigger !== 'chat';
}
