import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auto, startTestHost, type TestHost } from '../support/host';

let t: TestHost;
beforeAll(async () => {
  t = await startTestHost();
});
afterAll(async () => t.close());

async function finished(goal: string, steps: unknown[]) {
  const res = await t.api('POST', '/api/agent/run', { goal, config: auto, workflow: { steps } });
  const events = await t.stream(res.body.runId);
  return { runId: res.body.runId as string, events };
}

describe('run history', () => {
  it('searches goal/summary/error text and pages newest first with a cursor', async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await finished(`invoice batch ${i}`, [{ id: 'a', tool: 'noop' }])).runId);
    const failed = await finished('unrelated goal', [{ id: 'x', tool: 'fail' }]);
    const byGoal = (await t.api('GET', '/api/agent/runs?q=invoice')).body.runs;
    expect(byGoal.map((r: { id: string }) => r.id)).toEqual([...ids].reverse());
    const byError = (await t.api('GET', '/api/agent/runs?q=always%20fails')).body.runs;
    expect(byError.map((r: { id: string }) => r.id)).toEqual([failed.runId]);
    const wild = (await t.api('GET', '/api/agent/runs?q=%25')).body.runs;
    expect(wild).toHaveLength(0);
    const p1 = (await t.api('GET', '/api/agent/runs?q=invoice&limit=2')).body;
    expect(p1.runs).toHaveLength(2);
    const p2 = (await t.api('GET', `/api/agent/runs?q=invoice&limit=2&cursor=${p1.nextCursor}`)).body;
    const p3 = (await t.api('GET', `/api/agent/runs?q=invoice&limit=2&cursor=${p2.nextCursor}`)).body;
    expect([...p1.runs, ...p2.runs, ...p3.runs].map((r: { id: string }) => r.id)).toEqual([...ids].reverse());
    expect(p3.nextCursor).toBeNull();
    const onlyFailed = (await t.api('GET', '/api/agent/runs?status=failed')).body.runs;
    expect(onlyFailed.map((r: { id: string }) => r.id)).toEqual([failed.runId]);
    const both = (await t.api('GET', '/api/agent/runs?status=failed,%20completed&limit=200')).body.runs;
    expect(both.map((r: { id: string }) => r.id)).toEqual(expect.arrayContaining([failed.runId, ...ids]));
  });

  it('refuses a status filter naming an unknown status, in the caller\'s language, and lists nothing', async () => {
    const bad = await t.api('GET', '/api/agent/runs?status=failed,finished');
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_run_status');
    expect(bad.body.error.message).toContain('"finished"');
    expect(bad.body.error.message).toContain('awaiting_step_approval');
    expect(bad.body).not.toHaveProperty('runs');
    const zh = await t.api('GET', '/api/agent/runs?status=Failed', undefined, { 'accept-language': 'zh-CN' });
    expect(zh.status).toBe(400);
    expect(zh.body.error.message).toContain('未知的运行状态“Failed”');
    // an empty filter is no filter
    expect((await t.api('GET', '/api/agent/runs?status=')).status).toBe(200);
  });

  it("lists one workflow's runs with workflowId, owner-scoped: another owner's runs and workflows list nothing; a malformed id is a localized 400", async () => {
    const bob = (await t.api('POST', '/api/owners', { name: `bob${Date.now()}` })).body.token as string;
    const asBob = { 'x-fengyu-token': bob };
    async function published(name: string, headers?: Record<string, string>): Promise<string> {
      const created = await t.api('POST', '/api/workflows', { name, inputSchema: { type: 'object', properties: {} }, plan: { steps: [{ id: 'a', tool: 'noop' }] } }, headers);
      expect(created.status, JSON.stringify(created.body)).toBe(200);
      const pub = await t.api('POST', `/api/workflows/${created.body.id}/publish`, { revision: created.body.revision }, headers);
      expect(pub.status, JSON.stringify(pub.body)).toBe(200);
      return created.body.id as string;
    }
    async function ran(id: string, headers?: Record<string, string>): Promise<string> {
      const run = await t.api('POST', `/api/workflows/${id}/run`, { version: 'published', config: auto }, headers);
      expect(run.status, JSON.stringify(run.body)).toBe(200);
      return run.body.runId as string;
    }
    const mine = await published(`Listed ${Date.now()}`);
    const other = await published(`Other ${Date.now()}`);
    const bobs = await published(`Bob's ${Date.now()}`, asBob);
    const runs = [await ran(mine), await ran(other), await ran(mine), await ran(mine)];
    const bobRun = await ran(bobs, asBob);
    await finished('no workflow', [{ id: 'a', tool: 'noop' }]);
    const listed = async (query: string, headers?: Record<string, string>) => {
      const res = await t.api('GET', `/api/agent/runs?${query}`, undefined, headers);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      return res.body as { runs: Array<{ id: string; workflowId: string }>; nextCursor: string | null };
    };
    const expected = [runs[3], runs[2], runs[0]];
    expect((await listed(`workflowId=${mine}`)).runs.map((r) => r.id)).toEqual(expected);
    // pages with a cursor, like the whole history
    const p1 = await listed(`workflowId=${mine}&limit=2`);
    const p2 = await listed(`workflowId=${mine}&limit=2&cursor=${p1.nextCursor}`);
    expect([...p1.runs, ...p2.runs].map((r) => r.id)).toEqual(expected);
    expect(p2.nextCursor).toBeNull();
    expect((await listed(`workflowId=${other}&status=completed,failed`)).runs.map((r) => r.id)).toEqual([runs[1]]);
    // another owner's workflow and an unknown one list nothing, for either owner
    expect((await listed(`workflowId=${bobs}`)).runs).toEqual([]);
    expect((await listed(`workflowId=${mine}`, asBob)).runs).toEqual([]);
    expect((await listed('workflowId=no-such-flow')).runs).toEqual([]);
    expect((await listed(`workflowId=${bobs}`, asBob)).runs.map((r) => r.id)).toEqual([bobRun]);
    for (const bad of ['bad%20id', '-dash', 'x'.repeat(65), '']) {
      const en = await t.api('GET', `/api/agent/runs?workflowId=${bad}`);
      expect(en.status, bad).toBe(400);
      expect(en.body.error.message).toContain('workflowId');
      expect(en.body).not.toHaveProperty('runs');
    }
    const zh = await t.api('GET', '/api/agent/runs?workflowId=a/b', undefined, { 'accept-language': 'zh-CN' });
    expect(zh.status).toBe(400);
    expect(zh.body.error.message).toMatch(/[\u4e00-\u9fff]/);
  });

  it('returns plan, executions, audit events and posture in run detail', async () => {
    const { runId } = await finished('detail', [{ id: 'a', tool: 'echo', arguments: { value: 7 } }]);
    const d = (await t.api('GET', `/api/agent/runs/${runId}`)).body;
    expect(d.plan.steps[0].id).toBe('a');
    expect(d.executions[0]).toMatchObject({ stepId: 'a', status: 'done', attempts: 1, result: { echoed: 7 } });
    // the step's start instant survives its end being written over the running row
    const { startedAt, finishedAt } = d.executions[0] as { startedAt?: string; finishedAt: string };
    expect(typeof startedAt).toBe('string');
    expect(Date.parse(startedAt as string)).toBeLessThanOrEqual(Date.parse(finishedAt));
    expect(d.events.some((e: { type: string; kind?: string }) => e.type === 'audit' && e.kind === 'permission')).toBe(true);
    expect(d.sandbox).toHaveProperty('mode');
    expect(d.result).toMatchObject({ echoed: 7 });
  });

  it('forks a finished run into a new run paused for review', async () => {
    const { runId } = await finished('fork me', [{ id: 'a', tool: 'echo', arguments: { value: 1 } }]);
    const fork = await t.api('POST', `/api/agent/runs/${runId}/fork`);
    expect(fork.status).toBe(200);
    expect(fork.body.runId).not.toBe(runId);
    const gate = await t.waitFor(fork.body.runId, 'plan_approval_requested');
    expect(gate.data.plan.steps[0].id).toBe('a');
    const d = (await t.api('GET', `/api/agent/runs/${fork.body.runId}`)).body;
    expect(d.parentRunId).toBe(runId);
    expect(d.status).toBe('awaiting_plan_approval');
    await t.api('POST', `/api/agent/${fork.body.runId}/approve`);
    expect((await t.stream(fork.body.runId)).at(-1)?.type).toBe('complete');
  });

  it('rewinds to the first N steps, inheriting only their completed executions', async () => {
    const { runId } = await finished('rewind me', [
      { id: 'a', tool: 'echo', arguments: { value: 'A' } },
      { id: 'b', tool: 'echo', arguments: { value: 'B' }, dependsOn: ['a'] },
      { id: 'c', tool: 'echo', arguments: { value: 'C' }, dependsOn: ['b'] },
    ]);
    const bad = await t.api('POST', `/api/agent/runs/${runId}/rewind`, { keepSteps: 9 });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_keep_steps');
    const before = t.tools.calls.get('echo') ?? 0;
    const rw = await t.api('POST', `/api/agent/runs/${runId}/rewind`, { keepSteps: 1 });
    expect(rw.status).toBe(200);
    const gate = await t.waitFor(rw.body.runId, 'plan_approval_requested');
    expect(gate.data.plan.steps.map((s: { id: string }) => s.id)).toEqual(['a']);
    await t.api('POST', `/api/agent/${rw.body.runId}/approve`);
    const ev = await t.stream(rw.body.runId);
    expect(ev.at(-1)?.type).toBe('complete');
    expect(ev.find((e) => e.type === 'step_complete')?.data).toMatchObject({ stepId: 'a', reused: true, result: { echoed: 'A' } });
    expect(t.tools.calls.get('echo') ?? 0).toBe(before);
  });

  it('the rewind preview marks dropped steps that already wrote or sent something, and checks like the rewind', async () => {
    const { runId } = await finished('rewind with effects', [
      { id: 'a', tool: 'echo', arguments: { value: 'A' } },
      { id: 'note', title: 'Write the note', tool: 'write_note', arguments: { text: 'x' }, dependsOn: ['a'] },
      { id: 'send', tool: 'send_message', arguments: { to: 'x@example.com' }, dependsOn: ['note'] },
      { id: 'read', tool: 'echo', arguments: { value: 'B' }, dependsOn: ['send'] },
    ]);
    const preview = await t.api('POST', `/api/agent/runs/${runId}/rewind/preview`, { keepSteps: 1 });
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    expect(preview.body).toEqual({
      keepSteps: 1,
      kept: ['a'],
      dropped: ['note', 'send', 'read'],
      alreadyApplied: [
        { stepId: 'note', title: 'Write the note', ranStepId: 'note', tool: 'write_note', effect: 'write', status: 'done', executions: 1 },
        { stepId: 'send', ranStepId: 'send', tool: 'send_message', effect: 'external', status: 'done', executions: 1 },
      ],
    });
    expect((await t.api('POST', `/api/agent/runs/${runId}/rewind/preview`, { keepSteps: 3 })).body.alreadyApplied.map((a: { stepId: string }) => a.stepId)).toEqual([]);
    const bad = await t.api('POST', `/api/agent/runs/${runId}/rewind/preview`, { keepSteps: 5 });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'invalid_keep_steps']);
    const bob = await t.api('POST', '/api/owners', { name: 'rewind-bob' });
    const theirs = await t.api('POST', `/api/agent/runs/${runId}/rewind/preview`, { keepSteps: 1 }, { 'x-fengyu-token': bob.body.token });
    expect([theirs.status, theirs.body.error.code]).toEqual([404, 'run_not_found']);
    // a preview writes nothing: no run was started
    expect((await t.api('GET', '/api/agent/runs?q=rewind%20with%20effects')).body.runs).toHaveLength(1);
  });

  it('resume refuses completed runs; fork refuses live ones', async () => {
    const { runId } = await finished('done', [{ id: 'a', tool: 'noop' }]);
    const r = await t.api('POST', `/api/agent/runs/${runId}/resume`);
    expect(r.status).toBe(409);
    expect(r.body.error.code).toBe('run_not_resumable');
    const live = await t.api('POST', '/api/agent/run', { workflow: { steps: [{ id: 'a', tool: 'noop' }] } });
    await t.waitFor(live.body.runId, 'plan_approval_requested');
    const f = await t.api('POST', `/api/agent/runs/${live.body.runId}/fork`);
    expect(f.status).toBe(409);
    await t.api('POST', `/api/agent/${live.body.runId}/cancel`);
    expect((await t.stream(live.body.runId)).at(-1)?.type).toBe('cancelled');
  });

  it('resume of a failed run continues it after plan review', async () => {
    const { runId } = await finished('flaky run', [
      { id: 'a', tool: 'echo', arguments: { value: 1 } },
      { id: 'b', tool: 'flaky', arguments: { key: 'resume-key', failures: 1 }, dependsOn: ['a'] },
    ]);
    const res = await t.api('POST', `/api/agent/runs/${runId}/resume`);
    expect(res.status).toBe(200);
    const gate = await t.waitFor(runId, 'plan_approval_requested');
    await t.api('POST', `/api/agent/${runId}/approve`);
    // read after the gate: the replay of the first attempt ends at its own terminal `error`
    const ev = await t.stream(runId, { lastEventId: Number(gate.id) });
    expect(ev.at(-1)?.type).toBe('complete');
    expect((await t.api('GET', `/api/agent/runs/${runId}`)).body.status).toBe('completed');
  });

  it('refuses to replay a sandboxed run while plugins run unsandboxed', async () => {
    const { runId } = await finished('sandboxed once', [{ id: 'a', tool: 'noop' }]);
    const failed = await finished('sandboxed and failed', [{ id: 'x', tool: 'fail' }]);
    const db = t.host.ctx.db;
    await db.updateTable('runs').set({ sandbox: JSON.stringify({ mode: 'sandboxed', backend: 'bubblewrap' }) }).where('id', 'in', [runId, failed.runId]).execute();
    const posture = t.host.ctx.posture;
    t.host.ctx.posture = () => ({ mode: 'unsandboxed', backend: 'none' });
    try {
      for (const path of ['fork', 'rewind']) {
        const res = await t.api('POST', `/api/agent/runs/${runId}/${path}`, path === 'rewind' ? { keepSteps: 1 } : undefined);
        expect(res.status).toBe(409);
        expect(res.body.error.code).toBe('sandbox_weakened');
      }
      const resume = await t.api('POST', `/api/agent/runs/${failed.runId}/resume`);
      expect(resume.status).toBe(409);
      expect(resume.body.error.code).toBe('sandbox_weakened');
      expect((await t.api('GET', `/api/agent/runs/${failed.runId}`)).body.status).toBe('failed');
    } finally {
      t.host.ctx.posture = posture;
    }
  });

  it('batch starts isolated runs, each with its own stream', async () => {
    const res = await t.api('POST', '/api/agent/batch', {
      capabilityMode: 'read-only',
      runs: [
        { goal: 'one', workflow: { steps: [{ id: 'a', tool: 'echo', arguments: { value: 1 } }] }, config: { planApproval: false } },
        { goal: 'two', workflow: { steps: [{ id: 'a', tool: 'echo', arguments: { value: 2 } }] }, config: { planApproval: false } },
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.runIds).toHaveLength(2);
    const [one, two] = await Promise.all(res.body.runIds.map((id: string) => t.stream(id)));
    expect(one?.at(-1)?.data.result.echoed).toBe(1);
    expect(two?.at(-1)?.data.result.echoed).toBe(2);
    const tooMany = await t.api('POST', '/api/agent/batch', { runs: Array.from({ length: 9 }, () => ({ workflow: { steps: [{ id: 'a', tool: 'noop' }] } })) });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body.error.code).toBe('batch_size');
    const none = await t.api('POST', '/api/agent/batch', { runs: [] });
    expect(none.status).toBe(400);
    const badMode = await t.api('POST', '/api/agent/batch', { capabilityMode: 'full', runs: [{ workflow: { steps: [{ id: 'a', tool: 'noop' }] } }] });
    expect(badMode.status).toBe(400);
  });
});
