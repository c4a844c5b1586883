import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auto, startTestHost, type TestHost } from '../support/host';

let t: TestHost;
beforeAll(async () => {
  t = await startTestHost();
});
afterAll(async () => t.close());

const run = async (body: unknown) => {
  const res = await t.api('POST', '/api/agent/run', body);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body.runId as string;
};

describe('supplied workflow runs', () => {
  it('runs a three-level DAG whose middle steps overlap, with references resolved', async () => {
    const runId = await run({
      goal: 'dag',
      config: auto,
      workflow: {
        steps: [
          { id: 'a', tool: 'echo', arguments: { value: { n: 2, files: [{ name: 'x.xlsx' }] } } },
          { id: 'b', tool: 'slow', arguments: { ms: 300, id: 'b' }, dependsOn: ['a'] },
          { id: 'c', tool: 'slow', arguments: { ms: 300, id: 'c' }, dependsOn: ['a'] },
          { id: 'd', tool: 'echo', dependsOn: ['b', 'c'], arguments: { value: '{{node.a.result.echoed.n}}', text: 'first {{steps.1.result.echoed.files[0].name}} then {{last.result.slept}}' } },
        ],
      },
    });
    const events = await t.stream(runId);
    const types = events.map((e) => e.type);
    expect(types.at(-1)).toBe('complete');
    const spans = t.tools.spans.filter((s) => s.id === 'b' || s.id === 'c');
    expect(spans).toHaveLength(2);
    const [x, y] = spans as unknown as [{ start: number; end: number }, { start: number; end: number }];
    expect(x.start < y.end && y.start < x.end).toBe(true);
    const done = events.find((e) => e.type === 'step_complete' && e.data.stepId === 'd');
    expect(done?.data.result.args.value).toBe(2);
    expect(done?.data.result.args.text).toBe('first x.xlsx then 300');
    const complete = events.at(-1);
    expect(complete?.data.result.echoed).toBe(2);
    // seq strictly increasing, every frame carries runId and ts
    const seqs = events.map((e) => Number(e.id));
    expect([...seqs].sort((p, q) => p - q)).toEqual(seqs);
    expect(events.every((e) => e.data.runId === runId && e.data.ts)).toBe(true);
    // tool events wrap every invocation
    expect(events.filter((e) => e.type === 'tool' && e.data.phase === 'call')).toHaveLength(4);
    expect(events.filter((e) => e.type === 'tool' && e.data.phase === 'result')).toHaveLength(4);
  });

  it('honours config.maxConcurrency: with 1, ready steps run one at a time', async () => {
    const runId = await run({
      goal: 'bounded',
      config: { ...auto, maxConcurrency: 1 },
      workflow: {
        steps: [
          { id: 'root', tool: 'noop' },
          { id: 'm1', tool: 'slow', arguments: { ms: 150, id: 'm1' }, dependsOn: ['root'] },
          { id: 'm2', tool: 'slow', arguments: { ms: 150, id: 'm2' }, dependsOn: ['root'] },
        ],
      },
    });
    const events = await t.stream(runId);
    expect(events.at(-1)?.type).toBe('complete');
    const spans = t.tools.spans.filter((s) => s.id === 'm1' || s.id === 'm2') as unknown as { start: number; end: number }[];
    expect(spans).toHaveLength(2);
    const [x, y] = spans as [{ start: number; end: number }, { start: number; end: number }];
    expect(x.end <= y.start || y.end <= x.start).toBe(true);
    const bad = await t.api('POST', '/api/agent/run', { config: { ...auto, maxConcurrency: 0 }, workflow: { steps: [{ id: 'a', tool: 'noop' }] } });
    expect(bad.status).toBe(400);
  });

  it('a long chain of steps that answer at once lets the event loop turn while it runs', async () => {
    // 64 steps (the most a plan holds), each writing a sizeable result: far more work than one slice
    const n = 64;
    const text = 'x'.repeat(20_000);
    const before = t.tools.calls.get('echo') ?? 0;
    // what each turn of the loop sees of the run: how many of its steps had run by then
    const seen = new Set<number>();
    let ticking = true;
    const tick = () => {
      seen.add((t.tools.calls.get('echo') ?? 0) - before);
      if (ticking) setImmediate(tick);
    };
    setImmediate(tick);
    const runId = await run({ config: auto, inputs: { text }, workflow: { steps: Array.from({ length: n }, (_, i) => ({ id: `s${i}`, tool: 'echo', arguments: { text: '{{inputs.text}}' }, ...(i ? { dependsOn: [`s${i - 1}`] } : {}) })) } });
    const events = await t.stream(runId);
    ticking = false;
    expect(events.at(-1)?.type).toBe('complete');
    expect((t.tools.calls.get('echo') ?? 0) - before).toBe(n);
    // the loop turned in the middle of the run, not only before its first step and after its last
    expect([...seen].some((k) => k > 0 && k < n)).toBe(true);
  });

  it('pauses at the plan gate and adopts an edited plan', async () => {
    const runId = await run({ config: { permissionMode: 'full-access' }, workflow: { steps: [{ id: 'one', tool: 'echo', arguments: { value: 1 } }] } });
    const gate = await t.waitFor(runId, 'plan_approval_requested');
    expect(gate.data.plan.steps).toHaveLength(1);
    const bad = await t.api('POST', `/api/agent/${runId}/approve`, { steps: [{ id: 'x', tool: 'nope' }] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('invalid_plan');
    const ok = await t.api('POST', `/api/agent/${runId}/approve`, { steps: [{ id: 'two', tool: 'echo', arguments: { value: 'edited' } }] });
    expect(ok.status).toBe(200);
    const events = await t.stream(runId);
    expect(events.at(-1)?.type).toBe('complete');
    expect(events.find((e) => e.type === 'plan_approved')?.data.edited).toBe(true);
    expect(events.at(-1)?.data.result.echoed).toBe('edited');
    const again = await t.api('POST', `/api/agent/${runId}/approve`);
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('no_pending_gate');
  });

  it('gates write steps in ask mode, every step with stepApproval, and requiresApproval in approve-for-me', async () => {
    const ask = await run({ config: { planApproval: false }, workflow: { steps: [{ id: 'r', tool: 'noop' }, { id: 'w', tool: 'write_note', arguments: { text: 'hi' }, dependsOn: ['r'] }] } });
    const g = await t.waitFor(ask, 'step_approval_requested');
    expect(g.data.stepId).toBe('w');
    expect((await t.api('GET', `/api/agent/runs/${ask}`)).body.status).toBe('awaiting_step_approval');
    await t.api('POST', `/api/agent/${ask}/approve`);
    expect((await t.stream(ask)).at(-1)?.type).toBe('complete');

    const each = await run({ config: { planApproval: false, permissionMode: 'full-access', stepApproval: true }, workflow: { steps: [{ id: 'r', tool: 'noop' }] } });
    await t.waitFor(each, 'step_approval_requested');
    await t.api('POST', `/api/agent/${each}/approve`);
    expect((await t.stream(each)).at(-1)?.type).toBe('complete');

    const marked = await run({ config: { planApproval: false, permissionMode: 'approve-for-me' }, workflow: { steps: [{ id: 'w', tool: 'write_note', arguments: { text: 'a' } }, { id: 's', tool: 'send_message', requiresApproval: true, dependsOn: ['w'] }] } });
    const g2 = await t.waitFor(marked, 'step_approval_requested');
    expect(g2.data.stepId).toBe('s');
    await t.api('POST', `/api/agent/${marked}/approve`);
    expect((await t.stream(marked)).at(-1)?.type).toBe('complete');

    const full = await run({ config: { planApproval: false, permissionMode: 'full-access' }, workflow: { steps: [{ id: 's', tool: 'send_message', requiresApproval: true }] } });
    const fe = await t.stream(full);
    expect(fe.some((e) => e.type === 'step_approval_requested')).toBe(false);
    expect(fe.at(-1)?.type).toBe('complete');
  });

  it('rejecting a step gate fails the step', async () => {
    const id = await run({ config: { planApproval: false }, workflow: { steps: [{ id: 'w', tool: 'write_note', arguments: { text: 'no' } }] } });
    await t.waitFor(id, 'step_approval_requested');
    await t.api('POST', `/api/agent/${id}/approve`, { decision: 'reject', reason: 'not today' });
    const ev = await t.stream(id);
    expect(ev.at(-1)?.type).toBe('error');
    expect(ev.at(-1)?.data.message).toContain('not today');
  });

  it("rejecting the plan gate keeps the reason in the run's history", async () => {
    const id = await run({ config: { planApproval: true }, workflow: { steps: [{ id: 'w', tool: 'write_note', arguments: { text: 'no' } }] } });
    await t.waitFor(id, 'plan_approval_requested');
    expect((await t.api('POST', `/api/agent/${id}/approve`, { decision: 'reject', reason: 'wrong recipients' })).status).toBe(200);
    await t.stream(id);
    const detail = (await t.api('GET', `/api/agent/runs/${id}`)).body;
    expect(detail.status).toBe('cancelled');
    expect(detail.events.find((e: { type: string; kind?: string }) => e.type === 'audit' && e.kind === 'plan_rejected')).toMatchObject({ reason: 'wrong recipients' });
    expect(detail.summary).toBe('Plan rejected: wrong recipients');
    // found in the history by its reason
    const found = (await t.api('GET', '/api/agent/runs?q=recipients')).body;
    expect(JSON.stringify(found)).toContain(id);
  });

  it('retries retry-safe tools with backoff, and serves pinned results without executing', async () => {
    const id = await run({ config: auto, workflow: { steps: [{ id: 'f', tool: 'flaky', arguments: { key: 'k1', failures: 2 }, retry: { maxAttempts: 3, initialBackoffMs: 10 } }] } });
    const ev = await t.stream(id);
    expect(ev.filter((e) => e.type === 'step_retry')).toHaveLength(2);
    const done = ev.find((e) => e.type === 'step_complete');
    expect(done?.data.attempts).toBe(3);
    expect(done?.data.status).toBe('done');
    const before = t.tools.calls.get('write_note') ?? 0;
    const pinned = await run({ config: auto, workflow: { steps: [{ id: 'p', tool: 'write_note', arguments: { text: 'x' }, pinned: { result: { written: 'pinned!' } } }, { id: 'q', tool: 'echo', arguments: { value: '{{node.p.result.written}}' }, dependsOn: ['p'] }] } });
    const pe = await t.stream(pinned);
    expect(pe.at(-1)?.data.result.echoed).toBe('pinned!');
    expect(t.tools.calls.get('write_note') ?? 0).toBe(before);
  });

  it('a failing step fails the run and dependents never start', async () => {
    const id = await run({ config: auto, workflow: { steps: [{ id: 'x', tool: 'fail' }, { id: 'y', tool: 'noop', dependsOn: ['x'] }] } });
    const ev = await t.stream(id);
    expect(ev.at(-1)?.type).toBe('error');
    expect(ev.at(-1)?.data.message).toContain('this tool always fails');
    expect(ev.some((e) => e.type === 'step_start' && e.data.stepId === 'y')).toBe(false);
    const tools = ev.filter((e) => e.type === 'tool' && e.data.stepId === 'x');
    expect(tools.map((e) => e.data.phase)).toEqual(['call', 'result']);
    expect(tools[0]?.data).toMatchObject({ name: 'fail', arguments: {} });
    expect(String(tools[1]?.data.error)).toContain('this tool always fails');
    expect(tools[1]?.data.result).toBeUndefined();
    expect(ev.find((e) => e.type === 'step_complete' && e.data.stepId === 'x')?.data).toMatchObject({ status: 'failed', error: expect.stringContaining('always fails') });
  });

  it('cancel reaches a running tool call and ends the stream with cancelled', async () => {
    const id = await run({ config: auto, workflow: { steps: [{ id: 's', tool: 'slow', arguments: { ms: 20000, id: 'cancel-me' } }] } });
    await t.waitFor(id, 'step_start');
    const res = await t.api('POST', `/api/agent/${id}/cancel`);
    expect(res.status).toBe(200);
    const ev = await t.stream(id);
    expect(ev.at(-1)?.type).toBe('cancelled');
    expect(ev.some((e) => e.type === 'complete')).toBe(false);
    const detail = await t.api('GET', `/api/agent/runs/${id}`);
    expect(detail.body.status).toBe('cancelled');
    expect(t.tools.spans.some((s) => s.id === 'cancel-me')).toBe(false);
  });

  it('several subscribers see the same events; Last-Event-ID replays only what follows', async () => {
    const id = await run({ config: auto, workflow: { steps: [{ id: 'a', tool: 'slow', arguments: { ms: 100 } }, { id: 'b', tool: 'noop', dependsOn: ['a'] }] } });
    const [s1, s2] = await Promise.all([t.stream(id), t.stream(id)]);
    expect(s1.map((e) => e.id)).toEqual(s2.map((e) => e.id));
    const mid = Number(s1[2]?.id);
    const rest = await t.stream(id, { lastEventId: mid });
    expect(rest.map((e) => Number(e.id))).toEqual(s1.map((e) => Number(e.id)).filter((n) => n > mid));
    // the standard Last-Event-ID header (what a reconnecting EventSource sends) does the same
    const raw = await fetch(`${t.host.url}/api/agent/stream?runId=${id}`, { headers: { 'x-fengyu-token': t.host.token, 'last-event-id': String(mid) } });
    expect(raw.status).toBe(200);
    const ids = (await raw.text()).split('\n').filter((l) => l.startsWith('id:')).map((l) => Number(l.slice(3).trim()));
    expect(ids).toEqual(rest.map((e) => Number(e.id)));
  });

  it('renders {{inputs.x}} in the goal', async () => {
    const id = await run({ goal: 'Split by {{inputs.region}} into {{inputs.n}} parts', inputs: { region: 'Region', n: 4 }, config: auto, workflow: { steps: [{ id: 'a', tool: 'noop' }] } });
    await t.stream(id);
    expect((await t.api('GET', `/api/agent/runs/${id}`)).body.goal).toBe('Split by Region into 4 parts');
  });

  it('goal-only runs answer no_chat_backend in both languages', async () => {
    const en = await t.api('POST', '/api/agent/run', { goal: 'do something' });
    expect(en.status).toBe(400);
    expect(en.body.error.code).toBe('no_chat_backend');
    expect(en.body.error.message).toMatch(/No chat backend configured/);
    const zh = await t.api('POST', '/api/agent/run', { goal: 'do something' }, { 'accept-language': 'zh-CN' });
    expect(zh.body.error.message).toMatch(/未配置聊天后端/);
  });
});
