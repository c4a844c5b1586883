import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';

/**
 * A supplied plan's `plan_ready` payload is `{"plan":…}` around the plan as shown (secret arguments
 * redacted). When nothing is redacted it is made from the run row's plan text; the stored bytes are
 * those of serializing the shown plan either way, and a secret never reaches them.
 */

let t: TestHost;
beforeAll(async () => {
  t = await startTestHost();
});
afterAll(async () => t.close());

const SECRET = 'hunter2-ready-secret';

async function stored(steps: unknown[]) {
  const res = await t.api('POST', '/api/agent/run', { workflow: { goal: 'text of the plan', steps }, config: { planApproval: false, permissionMode: 'full-access' } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const runId = res.body.runId as string;
  const seen = await t.stream(runId);
  expect(seen.at(-1)?.type).toBe('complete');
  const db = t.host.ctx.db;
  const row = await db.selectFrom('runs').select(['plan']).where('id', '=', runId).executeTakeFirstOrThrow();
  const ready = await db.selectFrom('run_events').select(['data']).where('run_id', '=', runId).where('type', '=', 'plan_ready').execute();
  expect(ready).toHaveLength(1);
  return { planText: row.plan as string, data: ready[0]?.data as string, streamed: seen.find((e) => e.type === 'plan_ready')?.data.plan };
}

describe('the plan_ready payload', () => {
  it('is the row’s plan text in {"plan":…} when nothing is redacted, byte for byte what serializing the plan makes', async () => {
    const steps = [
      { id: 'a', tool: 'echo', arguments: { value: 'naïve "quoted" \\ \u2028 文字 😀', n: [1, 2.5, { x: null, y: false }] } },
      { id: 'b', tool: 'echo', arguments: { value: 'second' }, dependsOn: ['a'] },
      { id: 'c', tool: 'task_capacity', dependsOn: ['b'] },
    ];
    const { planText, data, streamed } = await stored(steps);
    expect(data).toBe(`{"plan":${planText}}`);
    expect(data).toBe(JSON.stringify({ plan: JSON.parse(planText) }));
    expect(streamed).toEqual(JSON.parse(planText));
  });

  it('is the shown plan serialized when a secret argument is redacted, and never holds the secret', async () => {
    const steps = [
      { id: 'e', tool: 'echo', arguments: { value: 'before' } },
      { id: 'l', tool: 'login', arguments: { user: 'ann', password: SECRET }, dependsOn: ['e'] },
    ];
    const { planText, data, streamed } = await stored(steps);
    // the run's row keeps the marker, never the value typed in
    expect(planText).not.toContain(SECRET);
    const shown = JSON.parse(planText);
    expect(shown.steps[1].arguments.password).toBe('[redacted]');
    expect(data).toBe(JSON.stringify({ plan: shown }));
    expect(data).not.toContain(SECRET);
    expect(streamed).toEqual(shown);
  });
});
