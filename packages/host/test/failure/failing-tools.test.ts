import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auto, startTestHost, type TestHost } from '../support/host';

/** Real failing tools fail their step with a stable code and keep what they answered. */

let t: TestHost;
beforeAll(async () => {
  t = await startTestHost();
});
afterAll(async () => t.close());

async function runSteps(steps: unknown[]): Promise<{ runId: string; events: Array<{ type: string; data: any }> }> {
  const res = await t.api('POST', '/api/agent/run', { goal: 'failing tools', config: auto, workflow: { steps } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const runId = res.body.runId as string;
  return { runId, events: await t.stream(runId) };
}

describe('a failing command in a run', () => {
  it('exit 3 fails the step with the exit status and the tail of stderr; the execution keeps the whole result', async () => {
    const { runId, events } = await runSteps([
      { id: 'boom', tool: 'execute_command', arguments: { command: 'echo partial; echo "no such thing" >&2; exit 3' } },
      { id: 'after', tool: 'echo', arguments: { value: 'never' }, dependsOn: ['boom'] },
    ]);
    const end = events.find((e) => e.type === 'step_complete' && e.data.stepId === 'boom');
    expect(end?.data).toMatchObject({ status: 'failed', error: 'The command exited with status 3.\nno such thing' });
    expect(events.at(-1)?.type).toBe('error');
    expect(events.some((e) => e.type === 'step_start' && e.data.stepId === 'after')).toBe(false);
    const result = events.find((e) => e.type === 'tool' && e.data.phase === 'result' && e.data.stepId === 'boom');
    expect(result?.data.result).toMatchObject({ exitCode: 3, stdout: 'partial\n', stderr: 'no such thing\n' });
    const detail = await t.api('GET', `/api/agent/runs/${runId}`);
    expect(detail.body.status).toBe('failed');
    const boom = detail.body.executions.find((s: { stepId: string }) => s.stepId === 'boom');
    expect(boom).toMatchObject({ status: 'failed', error: 'The command exited with status 3.\nno such thing', result: { exitCode: 3, stdout: 'partial\n' } });
  });

  it('a command that exits 0 still completes the run with its result', async () => {
    const { events } = await runSteps([{ id: 'fine', tool: 'execute_command', arguments: { command: 'echo fine' } }]);
    expect(events.at(-1)?.type).toBe('complete');
    expect(events.find((e) => e.type === 'step_complete')?.data.result).toMatchObject({ exitCode: 0, stdout: 'fine\n' });
  });
});

describe('a fetch the address policy refuses', () => {
  it('fails its step with web_fetch_blocked and runs nothing after it', async () => {
    const { events } = await runSteps([
      { id: 'inside', tool: 'web_fetch', arguments: { url: `${t.host.url}/api/settings` } },
      { id: 'after', tool: 'echo', arguments: { value: 'never' }, dependsOn: ['inside'] },
    ]);
    const end = events.find((e) => e.type === 'step_complete' && e.data.stepId === 'inside');
    expect(end?.data.status).toBe('failed');
    expect(end?.data.error).toMatch(/127\.0\.0\.1|loopback|private|blocked/i);
    expect(events.at(-1)?.type).toBe('error');
    expect(events.some((e) => e.type === 'step_start' && e.data.stepId === 'after')).toBe(false);
  });
});
