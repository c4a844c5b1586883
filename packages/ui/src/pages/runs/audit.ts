import type { RunEvent } from '@fengyu/protocol';

/**
 * The audit trail of a run detail: the events that explain what happened and who decided it
 * (hooks, rule decisions, approvals, cancel, resume, the end), in log order, as display rows.
 */

export interface AuditRow {
  seq: number;
  ts: string;
  /** i18n key under `runs.audit.kinds`. */
  kind: string;
  stepId?: string;
  tool?: string;
  /** Extra facts shown as text (decision, source, rule, reason, hook…), already strings. */
  facts: Array<[string, string]>;
}

const AUDIT_TYPES = new Set(['plan_approval_requested', 'plan_approved', 'step_approval_requested', 'step_approved', 'cancel_requested', 'resumed', 'complete', 'error', 'cancelled', 'interrupted', 'step_retry']);
const FACT_KEYS = ['decision', 'source', 'rule', 'reason', 'hook', 'event', 'effect', 'message', 'edited', 'attempt', 'error', 'summary'];

const text = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

export function auditRows(events: readonly RunEvent[]): AuditRow[] {
  const rows: AuditRow[] = [];
  for (const event of events) {
    // the payload's fields by name: the facts differ per event type
    const e: Readonly<Record<string, unknown>> = { ...event };
    if (event.type !== 'audit' && !AUDIT_TYPES.has(event.type)) continue;
    if (event.type === 'audit' && e.kind === 'progress') continue;
    const kind = event.type === 'audit' ? `audit_${String(e.kind ?? 'other')}` : event.type;
    const facts: Array<[string, string]> = [];
    for (const k of FACT_KEYS) if (e[k] !== undefined && e[k] !== null && e[k] !== '') facts.push([k, text(e[k])]);
    rows.push({ seq: event.seq, ts: event.ts, kind, stepId: typeof e.stepId === 'string' ? e.stepId : undefined, tool: typeof e.tool === 'string' ? e.tool : undefined, facts });
  }
  return rows;
}

export const KNOWN_AUDIT_KINDS = ['audit_hook', 'audit_permission', 'audit_approval', 'audit_step_rejected', 'plan_approval_requested', 'plan_approved', 'step_approval_requested', 'step_approved', 'cancel_requested', 'resumed', 'complete', 'error', 'cancelled', 'interrupted', 'step_retry'];
