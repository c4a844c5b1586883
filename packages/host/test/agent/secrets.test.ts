import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';

/** Tool arguments a schema marks secret (`writeOnly`) reach the tool but never an event or the API. */

let t: TestHost;
beforeAll(async () => {
  t = await startTestHost();
});
afterAll(async () => t.close());

const SECRET = 'hunter2-very-secret';

describe('secret tool arguments', () => {
  it('are redacted in plan events, step events, tool events and run detail', async () => {
    const res = await t.api('POST', '/api/agent/run', { config: { permissionMode: 'full-access' }, workflow: { steps: [{ id: 'l', tool: 'login', arguments: { user: 'ann', password: SECRET } }] } });
    const gate = await t.waitFor(res.body.runId, 'plan_approval_requested');
    expect(gate.data.plan.steps[0].arguments).toEqual({ user: 'ann', password: '[redacted]' });
    // a reviewer sends the plan back as shown: the original secret is kept
    const approved = await t.api('POST', `/api/agent/${res.body.runId}/approve`, gate.data.plan);
    expect(approved.status).toBe(200);
    const events = await t.stream(res.body.runId);
    expect(events.at(-1)?.data.result).toEqual({ user: 'ann', passwordLength: SECRET.length });
    expect(JSON.stringify(events)).not.toContain(SECRET);
    const detail = await t.api('GET', `/api/agent/runs/${res.body.runId}`);
    expect(JSON.stringify(detail.body)).not.toContain(SECRET);
    expect(detail.body.plan.steps[0].arguments.password).toBe('[redacted]');
  });
});
