import type { AgentPlan } from './plan';

/**
 * The inbox: every pending plan gate, step gate and input of an owner's runs, however
 * they were started. One shape for the REST list, the stream, the CLI and the UI.
 */

/** What the item asks for: a plan review, a step approval, or an input step's values. */
export type InboxItemKind = 'plan_approval' | 'step_approval' | 'input';
/** How the run that waits was started. */
export type InboxTrigger = 'manual' | 'task' | 'schedule' | 'webhook' | 'tool' | 'chat' | 'mcp';
/** How an item left the inbox. */
export type InboxOutcome = 'answered' | 'expired' | 'cancelled';

/** Every inbox item kind. */
export const INBOX_ITEM_KINDS: readonly InboxItemKind[] = Object.freeze(['plan_approval', 'step_approval', 'input'] as InboxItemKind[]);

/** Approvals in a run nobody watches expire after this long (inputs after their own `timeoutMs`). */
export const APPROVAL_GATE_TTL_MS = 24 * 3600 * 1000;

/** One pending gate of a run of the owner's. */
export interface InboxItem {
  /** The gate's id (the `gateId` of the run's `*_requested` event). */
  id: string;
  /** What it asks for. */
  kind: InboxItemKind;
  /** The run that waits. */
  runId: string;
  /** The step that waits; absent for a plan review. */
  stepId?: string;
  /** An input's question; a step gate's step title (or id); a plan review's run goal (or workflow name); at most 200 characters. */
  title: string;
  /** The workflow the run runs; absent for a goal or plan run. */
  workflowId?: string;
  /** That workflow's name. */
  workflowName?: string;
  /** How the run was started. */
  trigger: InboxTrigger;
  /** ISO-8601 UTC. */
  createdAt: string;
  /** When it expires (ISO-8601 UTC): unattended approvals after 24 h, inputs after their own timeout; absent: never. */
  expiresAt?: string;
  /** An input's form (a JSON Schema of type object). */
  form?: Record<string, unknown>;
  /** A plan gate's plan (secret values redacted). */
  plan?: AgentPlan;
  /** Why a step asks for approval. */
  reason?: string;
  /** A step gate's tool call, as the run event shows it. */
  detail?: {
    /** The tool the step would call. */
    tool?: string;
    /** Its arguments, secrets redacted. */
    arguments?: unknown;
    /** The tool's effect. */
    effect?: string;
  };
}

/** One page of `GET /api/inbox`, oldest first. */
export interface InboxPage {
  /** The items, at most 50. */
  items: InboxItem[];
  /** Pass as `cursor` for the next page; absent on the last page. */
  nextCursor?: string;
}

/** Frames of `GET /api/inbox/stream`. */
export interface InboxFrames {
  /** A gate opened. */
  inbox_added: {
    /** The new item. */
    item: InboxItem;
  };
  /** An item left the inbox. */
  inbox_removed: {
    /** The item's id. */
    id: string;
    /** How it left. */
    outcome: InboxOutcome;
  };
}

/** The run's `origin` (how it was started) as the inbox names it. */
export function inboxTrigger(origin: string | null | undefined): InboxTrigger {
  switch (origin) {
    case 'task':
    case 'workflow-error':
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

/**
 * Who or what started a run, in the one vocabulary every screen uses ("Started by"): the
 * inbox's triggers plus the runs made from another run. `origin` is the run's recorded origin.
 */
export type RunStarter = InboxTrigger | 'retry' | 'batch' | 'fork' | 'rewind' | 'failure';

/** Every `RunStarter`, in the order the UI lists them. */
export const RUN_STARTERS: readonly RunStarter[] = Object.freeze(['manual', 'task', 'schedule', 'webhook', 'tool', 'chat', 'mcp', 'retry', 'batch', 'fork', 'rewind', 'failure'] as RunStarter[]);

/** The run's `origin` in the one vocabulary; an origin this table does not know reads as by hand. */
export function runStarter(origin: string | null | undefined): RunStarter {
  if (origin === 'retry' || origin === 'batch' || origin === 'fork' || origin === 'rewind') return origin;
  // an error workflow's run (task kind and run origin `workflow-error`): started by another run's failure
  if (origin === 'workflow-error') return 'failure';
  return inboxTrigger(origin);
}
