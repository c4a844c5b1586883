import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';

/** "Published workflow execution uses the permissions already granted to the outer tool call." */

let t: TestHost;
let tool: string;
beforeAll(async () => {
  t = await startTestHost();
  const made = await t.api('POST', '/api/workflows', {
    name: 'note taker',
    inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] },
    plan: { steps: [{ id: 'w', tool: 'write_note', arguments: { text: '{{inputs.text}}' } }] },
  });
  expect(made.status, JSON.stringify(made.body)).toBe(200);
  const pub = await t.api('POST', `/api/workflows/${made.body.id}/publish`, { revision: made.body.revision });
  expect(pub.status, JSON.stringify(pub.body)).toBe(200);
  tool = `run_workflow_${made.body.id}`;
});
afterAll(async () => t.close());

describe('workflow tools and approvals', () => {
  it('an approved outer call lets the inner write step run', async () => {
    const before = t.tools.calls.get('write_note') ?? 0;
    const res = await t.api('POST', '/api/agent/run', { config: { planApproval: false, permissionMode: 'ask' }, workflow: { steps: [{ id: 'call', tool, arguments: { text: 'hello' } }] } });
    const gate = await t.waitFor(res.body.runId, 'step_approval_requested');
    expect(gate.data.stepId).toBe('call');
    await t.api('POST', `/api/agent/${res.body.runId}/approve`);
    const events = await t.stream(res.body.runId);
    expect(events.at(-1)?.type, JSON.stringify(events.at(-1)?.data)).toBe('complete');
    expect(t.tools.calls.get('write_note')).toBe(before + 1);
  });

  it('a deny rule still denies inside the inner run', async () => {
    const patched = await t.api('PATCH', '/api/settings', { permissions: { deny: ['Tool(write_note)'], ask: [], allow: [] } });
    expect(patched.status, JSON.stringify(patched.body)).toBe(200);
    try {
      const res = await t.api('POST', '/api/agent/run', { config: { planApproval: false, permissionMode: 'full-access' }, workflow: { steps: [{ id: 'call', tool, arguments: { text: 'no' } }] } });
      const events = await t.stream(res.body.runId);
      expect(events.at(-1)?.type).toBe('error');
      expect(events.at(-1)?.data.message).toMatch(/denied/i);
    } finally {
      await t.api('PATCH', '/api/settings', { permissions: { deny: [], ask: [], allow: [] } });
    }
  });
});
