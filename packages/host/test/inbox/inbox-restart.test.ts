import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ChildHost, childApi, killChildHosts, startChildHost } from '../support/child-host';
import { startTestHost, type TestHost } from '../support/host';
import { until } from '../tasks/helpers';

/**
 * Items survive a restart: background tasks whose run waits at a gate stay `waiting` across a
 * host stop and start on the same home, their items stay in the inbox with the same expiry, and
 * answering one (or its expiry, by the host clock) lets the run go on in place to its end. Runs
 * waiting at an input step come back `awaiting_input`, answered or defaulted after the restart.
 */

const home = mkdtempSync(join(tmpdir(), 'fengyu-inbox-restart-'));
let offset = 0;
const clock = { now: () => Date.now() + offset };
let t: TestHost | undefined;

afterAll(async () => {
  killChildHosts();
  await t?.close();
  rmSync(home, { recursive: true, force: true });
});

async function waiting(id: string) {
  return until(async () => {
    const s = (await (t as TestHost).api('GET', `/api/agent/tasks/${id}`)).body;
    return s.state === 'waiting' ? s : undefined;
  }, `task ${id} to wait`);
}

describe('a restart while items wait', () => {
  it('keeps the items and their tasks waiting; an answer or the expiry lets each run go on', async () => {
    t = await startTestHost({ keepHome: home, clock });
    const made = await t.api('POST', '/api/workflows', {
      name: 'Two notes',
      inputSchema: { type: 'object', properties: {} },
      plan: { steps: [{ id: 'first', tool: 'echo', arguments: { text: 'a' } }, { id: 'note', title: 'Write it', tool: 'write_note', arguments: { text: '{{node.first.result.echoed}}' }, dependsOn: ['first'] }] },
    });
    await t.api('POST', `/api/workflows/${made.body.id}/publish`, { revision: made.body.revision });
    const ids: string[] = [];
    for (let i = 0; i < 4; i++) ids.push((await t.api('POST', '/api/agent/tasks', { workflowId: made.body.id, permissionMode: 'ask' })).body.id);
    const before = await Promise.all(ids.map(waiting));
    // and a run started by hand, waiting at its plan review
    const manual = (await t.api('POST', '/api/agent/run', { goal: 'by hand', workflow: { steps: [{ id: 'only', tool: 'echo', arguments: { text: 'm' } }] } })).body.runId as string;
    // and one whose plan is rejected after the restart (its reason must reach the history)
    const rejected = (await t.api('POST', '/api/agent/run', { goal: 'to refuse', workflow: { steps: [{ id: 'only', tool: 'echo', arguments: { text: 'r' } }] } })).body.runId as string;
    // and two runs waiting at an input step: one answered after the restart, one whose wait ends then
    const form = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
    const asking = async (extra: Record<string, unknown>) =>
      (await (t as TestHost).api('POST', '/api/agent/run', { workflow: { steps: [{ id: 'ask', kind: 'input', form, ...extra }, { id: 'use', tool: 'echo', arguments: { value: '{{node.ask.result.n}}' }, dependsOn: ['ask'] }] }, config: { planApproval: false } })).body.runId as string;
    const answeredLater = await asking({});
    const defaultedLater = await asking({ timeoutMs: 3_600_000, onTimeout: 'default', defaults: { n: 7 } });
    const cancelledLater = await asking({});
    await until(async () => (await t?.api('GET', '/api/inbox'))?.body.items.length === 9, 'nine items');
    const items = (await t.api('GET', '/api/inbox')).body.items as Array<{ id: string; runId: string; expiresAt: string }>;
    await t.close();

    t = await startTestHost({ keepHome: home, clock });
    const after = (await t.api('GET', '/api/inbox')).body.items as typeof items;
    expect(after).toEqual(items);
    for (const b of before) expect((await t.api('GET', `/api/agent/tasks/${b.id}`)).body.state).toBe('waiting');
    const runs = await Promise.all(before.map(async (b) => (await t?.api('GET', `/api/agent/runs/${b.runId}`))?.body));
    expect(runs.map((r) => r.status)).toEqual(['awaiting_step_approval', 'awaiting_step_approval', 'awaiting_step_approval', 'awaiting_step_approval']);

    // cancelled after the restart, by the run page and by killing the task: each run ends
    // cancelled, its item goes, and the task ends cancelled (none of their steps runs)
    const [, , third, fourth] = before as Array<{ id: string; runId: string }>;
    expect((await t.api('POST', `/api/agent/${cancelledLater}/cancel`)).body.status).toBe('cancelled');
    expect((await t.api('POST', `/api/agent/${third?.runId}/cancel`)).body.status).toBe('cancelled');
    expect((await t.api('POST', `/api/agent/tasks/${fourth?.id}/kill`)).body.state).toBe('cancelled');
    for (const id of [cancelledLater, third?.runId, fourth?.runId]) expect((await t.api('GET', `/api/agent/runs/${id}`)).body.status).toBe('cancelled');
    const thirdTask = (await t.api('GET', `/api/agent/tasks/${third?.id}/output?timeoutMs=20000`)).body;
    expect(thirdTask.state).toBe('cancelled');
    const left = (await t.api('GET', '/api/inbox')).body.items as typeof items;
    expect(left.map((i) => i.runId).sort()).toEqual(after.map((i) => i.runId).filter((r) => ![cancelledLater, third?.runId, fourth?.runId].includes(r)).sort());
    // a second cancel changes nothing
    expect((await t.api('POST', `/api/agent/${third?.runId}/cancel`)).body.status).toBe('cancelled');

    // the input runs wait on after the restart; bad values are refused as before, good ones go on
    expect((await t.api('GET', `/api/agent/runs/${answeredLater}`)).body.status).toBe('awaiting_input');
    const bad = await t.api('POST', `/api/agent/${answeredLater}/input`, { values: { n: 1.5 } });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details.map((d: { field: string }) => d.field)).toEqual(['values.n']);
    expect((await t.api('POST', `/api/agent/${answeredLater}/approve`, {})).status).toBe(409);
    expect((await t.api('POST', `/api/agent/${answeredLater}/input`, { values: { n: 3 } })).status).toBe(200);
    await until(async () => (await t?.api('GET', `/api/agent/runs/${answeredLater}`))?.body.status === 'completed', 'the answered input run to complete');
    expect((await t.api('GET', `/api/agent/runs/${answeredLater}`)).body.executions.find((e: { stepId: string }) => e.stepId === 'use').result).toMatchObject({ echoed: 3 });
    expect((await t.api('POST', `/api/agent/${answeredLater}/input`, { values: { n: 3 } })).body.error.code).toBe('no_pending_input');

    // answered after the restart: the run goes on in place (its first step reused), the task completes
    const [first, second] = before as Array<{ id: string; runId: string }> as [{ id: string; runId: string }, { id: string; runId: string }];
    const item1 = after.find((i) => i.runId === first.runId) as (typeof items)[0];
    expect((await t.api('POST', `/api/inbox/${item1.id}`, {})).status).toBe(200);
    const done = (await t.api('GET', `/api/agent/tasks/${first.id}/output?timeoutMs=20000`)).body;
    expect(done.state, JSON.stringify(done)).toBe('completed');
    const run1 = (await t.api('GET', `/api/agent/runs/${first.runId}`)).body;
    expect(run1.status).toBe('completed');
    expect(run1.executions.find((e: { stepId: string }) => e.stepId === 'first').attempts).toBe(1);
    // (only the answered input run's step has called echo since the restart)
    expect(t.tools.calls.get('echo')).toBe(1);
    expect(t.tools.calls.get('write_note')).toBe(1);
    expect((await t.api('POST', `/api/inbox/${item1.id}`, {})).status).toBe(409);

    // the plan review, answered on the run page after the restart
    expect((await t.api('POST', `/api/agent/${manual}/approve`, {})).status).toBe(200);
    await until(async () => (await t?.api('GET', `/api/agent/runs/${manual}`))?.body.status === 'completed', 'the manual run to complete');
    // a plan rejected after the restart (the parked path): its reason is kept in the run's history
    expect((await t.api('POST', `/api/agent/${rejected}/approve`, { decision: 'reject', reason: 'wrong mailbox after restart' })).status).toBe(200);
    const refused = (await t.api('GET', `/api/agent/runs/${rejected}`)).body;
    expect([refused.status, refused.summary]).toEqual(['cancelled', 'Plan rejected: wrong mailbox after restart']);
    expect(refused.events.find((e: { type: string; kind?: string }) => e.type === 'audit' && e.kind === 'plan_rejected')).toMatchObject({ reason: 'wrong mailbox after restart' });
    expect(JSON.stringify((await t.api('GET', '/api/agent/runs?q=mailbox')).body)).toContain(rejected);

    // the other one's expiry still holds after the restart
    offset += 24 * 3600 * 1000 + 1000;
    expect(await t.host.ctx.inbox.sweepExpired()).toBe(2);
    await until(async () => (await t?.api('GET', `/api/agent/runs/${defaultedLater}`))?.body.status === 'completed', 'the defaulted input run to complete');
    expect((await t.api('GET', `/api/agent/runs/${defaultedLater}`)).body.executions.find((e: { stepId: string }) => e.stepId === 'use').result).toMatchObject({ echoed: 7 });
    const expired = (await t.api('GET', `/api/agent/tasks/${second.id}/output?timeoutMs=20000`)).body;
    expect(expired.state).toBe('failed');
    const run2 = (await t.api('GET', `/api/agent/runs/${second.runId}`)).body;
    expect(JSON.stringify(run2.executions)).toContain('gate_expired');
    expect((await t.api('GET', '/api/inbox')).body.items).toEqual([]);
  });

  it('an input answered just before a crash is not asked again: the resume takes the committed answer', async () => {
    const crashHome = mkdtempSync(join(tmpdir(), 'fengyu-input-crash-'));
    try {
      // the host dies right after the answer's commit (gate-answer), before the step runs
      const dying = await startChildHost(crashHome, { FENGYU_CRASH_AT: 'gate-answer' });
      const died = new Promise<string | null>((r) => dying.child.once('exit', (_c, signal) => r(signal)));
      const form = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
      const steps = [{ id: 'ask', kind: 'input', form }, { id: 'use', tool: 'echo', arguments: { value: '{{node.ask.result.n}}' }, dependsOn: ['ask'] }];
      const runId = (await childApi(dying, 'POST', '/api/agent/run', { workflow: { steps }, config: { planApproval: false } })).body.runId as string;
      const item = await until(async () => (await childApi(dying, 'GET', '/api/inbox')).body.items[0] as { id: string } | undefined, 'the input item');
      await fetch(`${dying.url}/api/inbox/${item.id}`, { method: 'POST', headers: { 'x-fengyu-token': dying.token, 'content-type': 'application/json' }, body: JSON.stringify({ values: { n: 41 } }) }).catch(() => undefined);
      expect(await died).toBe('SIGKILL');

      const h: ChildHost = await startChildHost(crashHome);
      expect((await childApi(h, 'GET', `/api/agent/runs/${runId}`)).body.status).toBe('interrupted');
      // hostile: the answer taken before the crash is settled; a retry of it is refused, never taken twice
      expect((await childApi(h, 'POST', `/api/inbox/${item.id}`, { values: { n: 5 } })).status).toBe(409);
      // a rewind keeping the input step takes the kept answer too (a new run, its plan reviewed)
      const rewound = (await childApi(h, 'POST', `/api/agent/runs/${runId}/rewind`, { keepSteps: 1 })).body.runId as string;
      await until(async () => (await childApi(h, 'GET', `/api/agent/runs/${rewound}`)).body.status === 'awaiting_plan_approval', 'the rewind’s plan review');
      expect((await childApi(h, 'POST', `/api/agent/${rewound}/approve`, {})).status).toBe(200);
      await until(async () => (await childApi(h, 'GET', `/api/agent/runs/${rewound}`)).body.status === 'completed', 'the rewound run to complete');
      const again = (await childApi(h, 'GET', `/api/agent/runs/${rewound}`)).body;
      expect(again.executions.find((e: { stepId: string }) => e.stepId === 'ask').result).toEqual({ n: 41 });
      expect(again.events.filter((e: { type: string }) => e.type === 'input_requested')).toHaveLength(0);
      // and a retry (a new run started at once) takes it as well
      const retried = (await childApi(h, 'POST', `/api/agent/runs/${runId}/retry`, {})).body.runId as string;
      await until(async () => (await childApi(h, 'GET', `/api/agent/runs/${retried}`)).body.status === 'completed', 'the retried run to complete');
      const retry = (await childApi(h, 'GET', `/api/agent/runs/${retried}`)).body;
      expect([retry.executions.find((e: { stepId: string }) => e.stepId === 'use').result?.echoed, retry.events.filter((e: { type: string }) => e.type === 'input_requested').length]).toEqual([41, 0]);
      expect((await childApi(h, 'POST', `/api/agent/runs/${runId}/resume`, {})).status).toBe(200);
      await until(async () => (await childApi(h, 'GET', `/api/agent/runs/${runId}`)).body.status === 'awaiting_plan_approval', 'the resume’s plan review');
      expect((await childApi(h, 'POST', `/api/agent/${runId}/approve`, {})).status).toBe(200);
      await until(async () => (await childApi(h, 'GET', `/api/agent/runs/${runId}`)).body.status === 'completed', 'the resumed run to complete');
      const run = (await childApi(h, 'GET', `/api/agent/runs/${runId}`)).body;
      expect(run.executions.find((e: { stepId: string }) => e.stepId === 'use').result).toMatchObject({ echoed: 41 });
      expect(run.executions.find((e: { stepId: string }) => e.stepId === 'ask').result).toEqual({ n: 41 });
      // asked once: no second input gate, nothing in the inbox
      expect(run.events.filter((e: { type: string }) => e.type === 'input_requested')).toHaveLength(1);
      expect((await childApi(h, 'GET', '/api/inbox')).body.items).toEqual([]);
    } finally {
      killChildHosts();
      rmSync(crashHome, { recursive: true, force: true });
    }
  });
});
