import type { RunEvent } from '@fengyu/protocol';
import { describe, expect, it } from 'vitest';
import { auditRows } from './audit';
import { RUN_STATUSES } from '@fengyu/protocol';
import { runActions } from './runs.api';

/** The run detail reads the contract's events: the audit trail and the actions a status offers. */

const base = { runId: 'r1', ts: '2030-01-01T00:00:00.000Z' };
const events: RunEvent[] = [
  { ...base, seq: 1, type: 'run_created', status: 'planning' },
  { ...base, seq: 2, type: 'audit', kind: 'permission', tool: 'write_file', stepId: 's1', decision: 'ask', source: 'rule', rule: 'ask: Write(*)', reason: 'a rule' },
  { ...base, seq: 3, type: 'audit', kind: 'progress', stepId: 's1' },
  { ...base, seq: 4, type: 'plan_approved', gateId: 'g1', edited: true, plan: { steps: [] } },
  { ...base, seq: 5, type: 'step_start', stepId: 's1', index: 1, attempt: 1 },
  { ...base, seq: 6, type: 'error', message: 'boom', code: 'internal' },
];

describe('run detail', () => {
  it('lists the events that explain the run, with their facts, and skips progress and steps', () => {
    expect(auditRows(events)).toEqual([
      { seq: 2, ts: base.ts, kind: 'audit_permission', stepId: 's1', tool: 'write_file', facts: [['decision', 'ask'], ['source', 'rule'], ['rule', 'ask: Write(*)'], ['reason', 'a rule']] },
      { seq: 4, ts: base.ts, kind: 'plan_approved', stepId: undefined, tool: undefined, facts: [['edited', 'true']] },
      { seq: 6, ts: base.ts, kind: 'error', stepId: undefined, tool: undefined, facts: [['message', 'boom']] },
    ]);
  });

  it('offers resume after failed, cancelled and interrupted runs; fork and rewind after any end', () => {
    const offered = Object.fromEntries(RUN_STATUSES.map((s) => [s, runActions(s)]));
    expect(offered.completed).toEqual({ resume: false, fork: true, rewind: true });
    for (const s of ['failed', 'cancelled', 'interrupted'] as const) expect(offered[s]).toEqual({ resume: true, fork: true, rewind: true });
    for (const s of ['planning', 'awaiting_plan_approval', 'running', 'awaiting_step_approval'] as const) expect(offered[s]).toEqual({ resume: false, fork: false, rewind: false });
  });
});
