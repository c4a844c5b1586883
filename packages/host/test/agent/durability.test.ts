import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventSource } from 'eventsource';
import { afterAll, describe, expect, it } from 'vitest';
import { childApi, killChildHosts, startChildHost } from '../support/child-host';
import { BOOT_MS } from '../support/serve-bin';

const home = mkdtempSync(join(tmpdir(), 'fengyu-crash-'));

afterAll(() => {
  killChildHosts();
  rmSync(home, { recursive: true, force: true });
});

const start = () => startChildHost(home);

const api = childApi;

function collect(h: { url: string; token: string }, runId: string, until: (type: string, data: any) => boolean): Promise<Array<{ type: string; data: any }>> {
  return new Promise((resolve) => {
    const es = new EventSource(`${h.url}/api/agent/stream?runId=${runId}&token=${h.token}`);
    const got: Array<{ type: string; data: any }> = [];
    for (const t of ['run_created', 'plan_ready', 'plan_approval_requested', 'plan_approved', 'step_start', 'tool', 'step_complete', 'audit', 'resumed', 'complete', 'error', 'cancelled', 'interrupted']) {
      es.addEventListener(t, (m: MessageEvent) => {
        const data = JSON.parse(m.data);
        got.push({ type: t, data });
        if (until(t, data)) {
          es.close();
          resolve(got);
        }
      });
    }
  });
}

describe('durability across a SIGKILL', () => {
  it('marks the run interrupted, keeps every reported event, and resume reuses completed steps', async () => {
    const first = await start();
    const plan = {
      steps: [
        { id: 'a', tool: 'echo', arguments: { value: 'kept' } },
        { id: 'b', tool: 'slow', arguments: { ms: 60000, id: 'long' }, dependsOn: ['a'] },
        { id: 'c', tool: 'echo', arguments: { value: '{{node.a.result.echoed}}' }, dependsOn: ['b'] },
      ],
    };
    const { body } = await api(first, 'POST', '/api/agent/run', { goal: 'crash test', workflow: plan, config: { planApproval: false, permissionMode: 'full-access' } });
    const runId = body.runId as string;
    const seen = await collect(first, runId, (t, d) => t === 'step_start' && d.stepId === 'b');
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));

    const second = await start();
    const detail = (await api(second, 'GET', `/api/agent/runs/${runId}`)).body;
    expect(detail.status).toBe('interrupted');
    const persistedSeqs = new Set(detail.events.map((e: { seq: number }) => e.seq));
    for (const e of seen) expect(persistedSeqs.has(e.data.seq)).toBe(true);
    expect(detail.executions.find((x: { stepId: string }) => x.stepId === 'a').status).toBe('done');

    const resumed = await api(second, 'POST', `/api/agent/runs/${runId}/resume`);
    expect(resumed.status).toBe(200);
    expect(resumed.body.runId).toBe(runId);
    const gate = await collect(second, runId, (t) => t === 'plan_approval_requested');
    expect(gate.some((e) => e.type === 'resumed')).toBe(true);
    const edited = { steps: plan.steps.map((s) => (s.id === 'b' ? { ...s, arguments: { ms: 5, id: 'short' } } : s)) };
    expect((await api(second, 'POST', `/api/agent/${runId}/approve`, edited)).status).toBe(200);
    const all = await collect(second, runId, (t) => t === 'complete' || t === 'error');
    const afterResume = all.slice(all.findIndex((e) => e.type === 'resumed'));
    expect(afterResume.at(-1)?.type).toBe('complete');
    expect(afterResume.some((e) => e.type === 'step_start' && e.data.stepId === 'a')).toBe(false);
    expect(afterResume.some((e) => e.type === 'step_start' && e.data.stepId === 'b')).toBe(true);
    expect(afterResume.at(-1)?.data.result.echoed).toBe('kept');
    second.child.kill('SIGTERM');
  }, 60_000 + 2 * BOOT_MS); // two boots through tsx (9–11 s each at load 13), budgeted apart from the checks

  it('a run waiting at a gate when the host died waits on (parked): its item survives and an answer lets it finish', async () => {
    const first = await start();
    const { body } = await api(first, 'POST', '/api/agent/run', { goal: 'gated crash', workflow: { steps: [{ id: 'a', tool: 'echo', arguments: { value: 1 } }] } });
    const runId = body.runId as string;
    await collect(first, runId, (t) => t === 'plan_approval_requested');
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));
    const second = await start();
    const detail = (await api(second, 'GET', `/api/agent/runs/${runId}`)).body;
    expect(detail.status).toBe('awaiting_plan_approval');
    expect(detail.events.some((e: { type: string }) => e.type === 'interrupted')).toBe(false);
    const items = (await api(second, 'GET', '/api/inbox')).body.items as Array<{ runId: string; kind: string }>;
    expect(items.find((i) => i.runId === runId)?.kind).toBe('plan_approval');
    expect((await api(second, 'POST', `/api/agent/${runId}/approve`)).status).toBe(200);
    const after = await collect(second, runId, (t) => t === 'complete' || t === 'error');
    expect(after.at(-1)?.type).toBe('complete');
    second.child.kill('SIGTERM');
  }, 60_000 + 2 * BOOT_MS); // two boots through tsx (9–11 s each at load 13), budgeted apart from the checks
});
