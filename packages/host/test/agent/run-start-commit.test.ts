import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NewEvent } from '../../src/events/event-log';
import { startTestHost, type TestHost } from '../support/host';

/**
 * A run with a supplied plan is created and announced in one commit: `run_created` and
 * `plan_ready` are written in the transaction that inserts the run row (which holds the plan and
 * the status `running`), so a host that dies at any point leaves either no run or a run whose log
 * already announces its plan. The plan is never announced twice.
 */

let t: TestHost;
const commits: Array<{ runId: string; types: string[] }> = [];

beforeAll(async () => {
  t = await startTestHost();
  const events = t.host.ctx.events;
  const grouped = events.commitGrouped.bind(events);
  events.commitGrouped = ((runId: string, list: NewEvent[], ...rest: unknown[]) => {
    commits.push({ runId, types: list.map((e) => e.type) });
    return (grouped as (...a: unknown[]) => ReturnType<typeof grouped>)(runId, list, ...rest);
  }) as typeof events.commitGrouped;
});

afterAll(async () => {
  await t.close();
});

const steps = [{ id: 'a', tool: 'echo', arguments: { value: 1 } }];
const of = (runId: string) => commits.filter((c) => c.runId === runId).map((c) => c.types);

describe('the commit that creates a run', () => {
  it('writes run_created and plan_ready together for a supplied plan without review', async () => {
    const res = await t.api('POST', '/api/agent/run', { workflow: { steps }, config: { planApproval: false } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const runId = res.body.runId as string;
    const events = await t.stream(runId);
    expect(events.at(-1)?.type).toBe('complete');
    const written = of(runId);
    expect(written[0]).toEqual(['run_created', 'plan_ready']);
    expect(written.slice(1).flat()).not.toContain('plan_ready');
    expect(events.map((e) => e.type).filter((x) => x === 'plan_ready')).toHaveLength(1);
    expect((await t.host.ctx.runs.get(runId))?.status).toBe('completed');
  });

  it('writes them together with review, and the review opens in a later commit', async () => {
    const res = await t.api('POST', '/api/agent/run', { workflow: { steps } });
    const runId = res.body.runId as string;
    await t.waitFor(runId, 'plan_approval_requested');
    const written = of(runId);
    expect(written[0]).toEqual(['run_created', 'plan_ready']);
    expect(written[1]).toEqual(['plan_approval_requested']);
    expect((await t.api('POST', `/api/agent/${runId}/cancel`)).status).toBe(200);
  });

  it('a fork announces its plan at creation; a resume announces nothing again', async () => {
    const first = await t.api('POST', '/api/agent/run', { workflow: { steps: [{ id: 'a', tool: 'echo', arguments: { value: 1 } }, { id: 'b', tool: 'fail', arguments: {}, dependsOn: ['a'] }] }, config: { planApproval: false } });
    expect(first.status, JSON.stringify(first.body)).toBe(200);
    const runId = first.body.runId as string;
    expect((await t.stream(runId)).at(-1)?.type).toBe('error');
    const fork = await t.api('POST', `/api/agent/runs/${runId}/fork`);
    expect(fork.status, JSON.stringify(fork.body)).toBe(200);
    await t.waitFor(fork.body.runId, 'plan_approval_requested');
    expect(of(fork.body.runId)[0]).toEqual(['run_created', 'plan_ready']);
    const before = of(runId).length;
    const resumed = await t.api('POST', `/api/agent/runs/${runId}/resume`);
    expect(resumed.status, JSON.stringify(resumed.body)).toBe(200);
    await t.waitFor(runId, 'plan_approval_requested');
    expect(of(runId).slice(before).flat()).not.toContain('plan_ready');
  });
});
