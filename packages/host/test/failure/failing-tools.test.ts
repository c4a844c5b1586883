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

const ended = (events: Array<{ type: string; data: any }>, stepId: string, iteration?: number) =>
  events.find((e) => e.type === 'step_complete' && e.data.stepId === stepId && e.data.iteration === iteration)?.data;

describe('onError: continue', () => {
  it('exit 3 ends the step failed, dependents run with its result null and its error readable, the run completes listing it', async () => {
    const { runId, events } = await runSteps([
      { id: 'boom', tool: 'execute_command', onError: 'continue', arguments: { command: 'echo "no such thing" >&2; exit 3' } },
      { id: 'report', tool: 'echo', dependsOn: ['boom'], arguments: { value: { code: '{{node.boom.error.code}}', error: '{{node.boom.error}}', result: '{{node.boom.result}}' } } },
      { id: 'check', kind: 'condition', dependsOn: ['boom'], cases: [{ name: 'broke', when: { all: [{ left: '{{node.boom.error.code}}', op: 'eq', right: 'command_exit_nonzero' }] } }] },
      { id: 'alarm', tool: 'echo', dependsOn: ['check:broke'], arguments: { value: 'alarm' } },
    ]);
    expect(ended(events, 'boom')).toMatchObject({ status: 'failed', error: 'The command exited with status 3.\nno such thing' });
    const error = { code: 'command_exit_nonzero', message: 'The command exited with status 3.\nno such thing' };
    expect(ended(events, 'report')).toMatchObject({ status: 'done', result: { echoed: { code: 'command_exit_nonzero', error, result: null } } });
    expect(ended(events, 'check')).toMatchObject({ status: 'done', result: { branch: 'broke' } });
    expect(ended(events, 'alarm')?.status).toBe('done');
    const last = events.at(-1);
    expect(last?.type).toBe('complete');
    expect(last?.data.failedSteps).toEqual([{ stepId: 'boom', error }]);
    const detail = await t.api('GET', `/api/agent/runs/${runId}`);
    expect(detail.body).toMatchObject({ status: 'completed', failedSteps: [{ stepId: 'boom', error }] });
    expect(detail.body.executions.find((s: { stepId: string }) => s.stepId === 'boom')).toMatchObject({ status: 'failed', result: { exitCode: 3 } });
  });

  it('a sleep past its timeout fails step_timeout and the run goes on; without onError the same plan fails', async () => {
    const plan = (onError?: string) => [
      { id: 'slow', tool: 'execute_command', timeoutMs: 1000, ...(onError ? { onError } : {}), arguments: { command: 'sleep 30' } },
      { id: 'after', tool: 'echo', dependsOn: ['slow'], arguments: { value: '{{node.slow.error.code}}' } },
    ];
    const { events } = await runSteps(plan('continue'));
    expect(ended(events, 'slow')?.status).toBe('failed');
    expect(ended(events, 'after')).toMatchObject({ status: 'done', result: { echoed: 'step_timeout' } });
    expect(events.at(-1)?.data.failedSteps).toMatchObject([{ stepId: 'slow', error: { code: 'step_timeout' } }]);
    // the same dependency on a failure left at `fail` (quicker to fail: exit 3) fails the run and runs nothing after it
    const failing = await runSteps([{ ...plan()[0], timeoutMs: undefined, arguments: { command: 'exit 3' } }, plan()[1]]);
    expect(failing.events.some((e) => e.type === 'step_start' && e.data.stepId === 'after')).toBe(false);
    expect(failing.events.at(-1)?.type).toBe('error');
    expect(failing.events.some((e) => e.type === 'complete')).toBe(false);
  });
});

describe('onError: branch', () => {
  const branching = (url: string) => [
    { id: 'fetch', tool: 'web_fetch', onError: 'branch', arguments: { url } },
    { id: 'use', tool: 'echo', dependsOn: ['fetch:ok'], arguments: { value: 'fetched' } },
    { id: 'plain', tool: 'echo', dependsOn: ['fetch'], arguments: { value: 'plain' } },
    { id: 'fallback', tool: 'echo', dependsOn: ['fetch:error'], arguments: { value: '{{node.fetch.error.message}}' } },
    { id: 'done', tool: 'echo', dependsOn: ['use', 'fallback'], join: 'any', arguments: { value: 'end' } },
  ];

  it('a fetch the address policy refuses takes fetch:error: x and x:ok are skipped, join any runs after the fallback', async () => {
    const { runId, events } = await runSteps(branching(`${t.host.url}/api/settings`));
    expect(ended(events, 'fetch')?.status).toBe('failed');
    expect(ended(events, 'use')?.status).toBe('skipped');
    expect(ended(events, 'plain')?.status).toBe('skipped');
    expect(ended(events, 'fallback')?.status).toBe('done');
    expect(ended(events, 'fallback')?.result.echoed).toBe(ended(events, 'fetch')?.error);
    expect(ended(events, 'done')?.status).toBe('done');
    expect(events.at(-1)?.type).toBe('complete');
    const detail = await t.api('GET', `/api/agent/runs/${runId}`);
    expect(detail.body.failedSteps).toMatchObject([{ stepId: 'fetch', error: { message: ended(events, 'fetch')?.error } }]);
  });

  it('a step that succeeds takes x:ok (and x): the error side is skipped and nothing is listed as failed', async () => {
    const { runId, events } = await runSteps([
      { id: 'x', tool: 'echo', onError: 'branch', arguments: { value: 1 } },
      { id: 'ok', tool: 'echo', dependsOn: ['x:ok'], arguments: { value: '{{node.x.error}}' } },
      { id: 'err', tool: 'echo', dependsOn: ['x:error'], arguments: { value: 'never' } },
    ]);
    expect(ended(events, 'ok')).toMatchObject({ status: 'done', result: { echoed: null } });
    expect(ended(events, 'err')?.status).toBe('skipped');
    expect(events.at(-1)?.type).toBe('complete');
    expect(events.at(-1)?.data).not.toHaveProperty('failedSteps');
    expect((await t.api('GET', `/api/agent/runs/${runId}`)).body).not.toHaveProperty('failedSteps');
  });

  it('works per iteration inside a forEach: the failing item takes its error branch, the others their ok branch', async () => {
    const { runId, events } = await runSteps([
      {
        id: 'each',
        kind: 'forEach',
        items: [0, 3, 0],
        steps: [
          { id: 'run', tool: 'execute_command', onError: 'branch', arguments: { command: 'exit {{item}}' } },
          { id: 'good', tool: 'echo', dependsOn: ['run:ok'], arguments: { value: 'ok {{index}}' } },
          { id: 'bad', tool: 'echo', dependsOn: ['run:error'], arguments: { value: '{{index}} {{node.run.error.code}}' } },
          { id: 'tail', tool: 'echo', dependsOn: ['good', 'bad'], join: 'any', arguments: { value: '{{index}}' } },
        ],
      },
    ]);
    for (const i of [0, 2]) {
      expect(ended(events, 'good', i)?.status).toBe('done');
      expect(ended(events, 'bad', i)?.status).toBe('skipped');
    }
    expect(ended(events, 'run', 1)?.status).toBe('failed');
    expect(ended(events, 'good', 1)?.status).toBe('skipped');
    expect(ended(events, 'bad', 1)).toMatchObject({ status: 'done', result: { echoed: '1 command_exit_nonzero' } });
    expect(ended(events, 'each')).toMatchObject({ status: 'done', result: [{ echoed: 0 }, { echoed: 1 }, { echoed: 2 }] });
    expect(events.at(-1)?.data.failedSteps).toMatchObject([{ stepId: 'run', iteration: 1, error: { code: 'command_exit_nonzero' } }]);
    expect((await t.api('GET', `/api/agent/runs/${runId}`)).body.status).toBe('completed');
  });
});
