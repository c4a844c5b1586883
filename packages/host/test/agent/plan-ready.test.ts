import { describe, expect, it } from 'vitest';
import { scriptedHost } from '../support/scripted-host';

/** `plan_ready` announces each plan exactly once: supplied or drafted, with or without review. */

const { t, llm } = scriptedHost({
  setup: async () => {
    const res = await t.api('PATCH', '/api/settings', { backends: [{ id: 'local', provider: 'openai-compatible', baseURL: llm.url, model: 'scripted', apiKey: 'sk-test' }], defaultBackend: 'local' });
    expect(res.status).toBe(200);
  },
});

const steps = [{ id: 'a', tool: 'echo', arguments: { value: 1 } }];
const drafted = `\`\`\`json\n${JSON.stringify({ steps })}\n\`\`\``;

async function runToEnd(body: unknown, approve: boolean) {
  const res = await t.api('POST', '/api/agent/run', body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const runId = res.body.runId as string;
  if (approve) {
    await t.waitFor(runId, 'plan_approval_requested');
    expect((await t.api('POST', `/api/agent/${runId}/approve`)).status).toBe(200);
  }
  const events = await t.stream(runId);
  expect(events.at(-1)?.type).toBe('complete');
  return events.map((e) => e.type);
}

const readyCount = (types: string[]) => types.filter((x) => x === 'plan_ready').length;

describe('plan_ready', () => {
  it('is sent once for a supplied plan without review', async () => {
    expect(readyCount(await runToEnd({ workflow: { steps }, config: { planApproval: false } }, false))).toBe(1);
  });

  it('is sent once for a supplied plan with review, before the review opens', async () => {
    const types = await runToEnd({ workflow: { steps } }, true);
    expect(readyCount(types)).toBe(1);
    expect(types.indexOf('plan_ready')).toBeLessThan(types.indexOf('plan_approval_requested'));
  });

  it('is sent once for a drafted plan without review', async () => {
    llm.push({ text: drafted }, { text: 'done' });
    expect(readyCount(await runToEnd({ goal: 'echo one', config: { planApproval: false } }, false))).toBe(1);
  });

  it('is sent once for a drafted plan with review, before the review opens', async () => {
    llm.push({ text: drafted }, { text: 'done' });
    const types = await runToEnd({ goal: 'echo one' }, true);
    expect(readyCount(types)).toBe(1);
    expect(types.indexOf('plan_ready')).toBeLessThan(types.indexOf('plan_approval_requested'));
  });

  it('is not sent again when an edited plan is approved', async () => {
    const res = await t.api('POST', '/api/agent/run', { workflow: { steps } });
    const runId = res.body.runId as string;
    await t.waitFor(runId, 'plan_approval_requested');
    const edited = { steps: [{ id: 'a', tool: 'echo', arguments: { value: 2 } }] };
    expect((await t.api('POST', `/api/agent/${runId}/approve`, edited)).status).toBe(200);
    const types = (await t.stream(runId)).map((e) => e.type);
    expect(readyCount(types)).toBe(1);
    expect(types).toContain('plan_approved');
  });
});
