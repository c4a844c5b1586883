import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type ChildHost, childApi, killChildHosts, startChildHost } from '../support/child-host';

/**
 * A crash while a non-idempotent tool runs: the step is reported uncertain, and a resume shows it
 * at the plan review instead of running it again; it runs again only when the reviewer keeps it.
 * Two real hosts, one after the other, on the same home; the first is SIGKILLed.
 */

const home = mkdtempSync(join(tmpdir(), 'fengyu-uncertain-'));
const work = mkdtempSync(join(tmpdir(), 'fengyu-uncertain-work-'));
const marker = join(work, 'marker');

afterAll(() => {
  killChildHosts();
  rmSync(home, { recursive: true, force: true });
  rmSync(work, { recursive: true, force: true });
});

type Host = ChildHost;

const start = () => startChildHost(home);

const api = childApi;

/** Polls the run detail until `ok` holds (no fixed sleeps). */
async function until(h: Host, runId: string, ok: (detail: any) => boolean): Promise<any> {
  for (;;) {
    const detail = (await api(h, 'GET', `/api/agent/runs/${runId}`)).body;
    if (ok(detail)) return detail;
    await new Promise((r) => setTimeout(r, 50));
  }
}

const lines = () => (existsSync(marker) ? readFileSync(marker, 'utf8').trim().split('\n').length : 0);

describe('a crash during a non-idempotent step', () => {
  it('reports the step uncertain and never re-runs it without review', async () => {
    // Appends one line per run; only the first run lingers, so the host dies while it runs.
    // (No command substitution in a test operand: the permission floor asks for that in every mode.)
    const command = `echo ran >> '${marker}'; [ -e '${marker}.once' ] || { touch '${marker}.once'; sleep 120; }`;
    const plan = {
      steps: [
        { id: 'read', tool: 'echo', arguments: { value: 'kept' } },
        { id: 'send', tool: 'execute_command', arguments: { command }, dependsOn: ['read'] },
        { id: 'after', tool: 'echo', arguments: { value: '{{node.send.result.exitCode}}' }, dependsOn: ['send'] },
      ],
    };
    const first = await start();
    const { body } = await api(first, 'POST', '/api/agent/run', { goal: 'uncertain', workflow: plan, config: { planApproval: false, permissionMode: 'full-access' } });
    const runId = body.runId as string;
    await until(first, runId, (d) => d.executions.some((e: { stepId: string; status: string }) => e.stepId === 'send' && e.status === 'running') && lines() === 1);
    first.child.kill('SIGKILL');
    await new Promise((r) => first.child.once('exit', r));

    const second = await start();
    const detail = (await api(second, 'GET', `/api/agent/runs/${runId}`)).body;
    expect(detail.status).toBe('interrupted');
    const uncertain = detail.events.filter((e: { type: string }) => e.type === 'step_uncertain');
    expect(uncertain).toHaveLength(1);
    expect(uncertain[0]).toMatchObject({ stepId: 'send', tool: 'execute_command' });
    expect(detail.events.at(-1).type).toBe('interrupted');
    expect(detail.executions.find((e: { stepId: string }) => e.stepId === 'send').status).toBe('uncertain');
    expect(detail.executions.find((e: { stepId: string }) => e.stepId === 'read').status).toBe('done');

    expect((await api(second, 'POST', `/api/agent/runs/${runId}/resume`)).status).toBe(200);
    const review = await until(second, runId, (d) => d.status === 'awaiting_plan_approval');
    expect(review.gate.detail.uncertainSteps).toEqual(['send']);
    const requested = review.events.filter((e: { type: string }) => e.type === 'plan_approval_requested').at(-1);
    expect(requested.uncertainSteps).toEqual(['send']);
    expect(review.events.some((e: { type: string; stepId?: string; seq: number }) => e.type === 'step_start' && e.stepId === 'send' && e.seq > requested.seq)).toBe(false);
    expect(lines()).toBe(1);

    // The reviewer keeps the step: now, and only now, it runs again.
    expect((await api(second, 'POST', `/api/agent/${runId}/approve`)).status).toBe(200);
    const done = await until(second, runId, (d) => d.status === 'completed' || d.status === 'failed');
    expect(done.status).toBe('completed');
    expect(lines()).toBe(2);
    second.child.kill('SIGTERM');
  }, 240_000);
});
