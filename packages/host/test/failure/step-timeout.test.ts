import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packProbe } from '../plugins/helpers';
import { auto } from '../support/host';
import { scriptedHost } from '../support/scripted-host';
import { waitUntil } from '../support/wait';

/**
 * A step's `timeoutMs` aborts the attempt — a command's process group, a worker's call, an MCP
 * call, a model call — and fails it with `step_timeout`; `retry` applies after it.
 */

const root = resolve(import.meta.dirname, '../../../..');
const everything = join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

const { t, llm } = scriptedHost({
  setup: async () => {
    const settings = await t.api('PATCH', '/api/settings', {
      backends: [{ id: 'local', provider: 'openai-compatible', baseURL: llm.url, model: 'scripted', apiKey: 'sk-test' }],
      defaultBackend: 'local',
      mcpServers: { everything: { command: process.execPath, args: [everything] } },
    });
    expect(settings.status, JSON.stringify(settings.body)).toBe(200);
    const res = await t.upload('/api/plugins', readFileSync(await packProbe()), 'plugin.fyp');
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  },
});

async function run(steps: unknown[]): Promise<{ runId: string; events: Array<{ type: string; data: any }> }> {
  const res = await t.api('POST', '/api/agent/run', { goal: 'timeouts', config: auto, workflow: { steps } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const runId = res.body.runId as string;
  return { runId, events: await t.stream(runId) };
}

const ended = (events: Array<{ type: string; data: any }>, stepId: string) => events.find((e) => e.type === 'step_complete' && e.data.stepId === stepId)?.data;
const timedOut = (stepId: string, ms: number) => ({ status: 'failed', error: `Step "${stepId}" did not finish within its timeout of ${ms} ms and was stopped.` });

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe('step timeoutMs', () => {
  it('stops a command past its timeout: the whole process group is gone, and the step fails step_timeout', async () => {
    const marker = `timeout-${Date.now()}`;
    const { runId, events } = await run([{ id: 'wait', tool: 'execute_command', timeoutMs: 1000, arguments: { command: `sleep 300 & echo $! > ${marker}.pid; sleep 300` } }]);
    expect(ended(events, 'wait')).toMatchObject(timedOut('wait', 1000));
    expect(events.at(-1)?.type).toBe('error');
    const pid = Number(readFileSync(join(t.home, 'runs', runId, 'work', `${marker}.pid`), 'utf8').trim());
    expect(pid).toBeGreaterThan(0);
    // the background child of the command's group is killed with it (SIGTERM, SIGKILL after the grace)
    await waitUntil(() => !alive(pid), 10_000);
  });

  it('cancels a plugin call past its timeout; the same worker answers the next call', async () => {
    const before = await run([{ id: 'echo', tool: 'probe_echo', arguments: { value: 1 } }]);
    const { events } = await run([{ id: 'slow', tool: 'probe_slow', timeoutMs: 1000, arguments: { ms: 60_000 } }]);
    expect(ended(events, 'slow')).toMatchObject(timedOut('slow', 1000));
    const after = await run([{ id: 'echo', tool: 'probe_echo', arguments: { value: 2 } }]);
    expect(ended(after.events, 'echo')).toMatchObject({ status: 'done', result: { instance: ended(before.events, 'echo')?.result.instance } });
  });

  it('a worker that ignores the cancellation is replaced: the next call gets a fresh worker', async () => {
    const before = await run([{ id: 'echo', tool: 'probe_echo', arguments: { value: 1 } }]);
    const old = ended(before.events, 'echo')?.result.instance;
    expect(old).toBeTruthy();
    const { events } = await run([{ id: 'hang', tool: 'probe_hang', timeoutMs: 1000, arguments: {} }]);
    expect(ended(events, 'hang')?.status).toBe('failed');
    // the hung worker is stopped after the cancel grace; a later call is answered by a new one
    await waitUntil(async () => {
      const again = await run([{ id: 'echo', tool: 'probe_echo', arguments: { value: 2 } }]);
      const done = ended(again.events, 'echo');
      return done?.status === 'done' && done.result.instance !== old;
    }, 15_000);
  });

  it('aborts an MCP call past its timeout', async () => {
    await waitUntil(async () => ((await t.api('GET', '/api/agent/tools')).body as Array<{ name: string }>).some((e) => e.name === 'everything__trigger-long-running-operation'), 20_000);
    const { events } = await run([{ id: 'long', tool: 'everything__trigger-long-running-operation', timeoutMs: 1000, arguments: { duration: 60, steps: 60 } }]);
    expect(ended(events, 'long')).toMatchObject(timedOut('long', 1000));
  });

  it('aborts a model step past its timeout', async () => {
    llm.push({ text: 'a b c d e f g h i j k l m n o p', chunkDelayMs: 2000 });
    const { events } = await run([{ id: 'think', instruction: 'Say something slowly.', timeoutMs: 1000 }]);
    expect(ended(events, 'think')).toMatchObject(timedOut('think', 1000));
  });

  it('retries after a timeout on a retry-safe tool, then fails step_timeout', async () => {
    const { events } = await run([{ id: 'nap', tool: 'slow', timeoutMs: 1000, retry: { maxAttempts: 2, initialBackoffMs: 10 }, arguments: { ms: 30_000 } }]);
    const retry = events.find((e) => e.type === 'step_retry');
    expect(retry?.data).toMatchObject({ stepId: 'nap', attempt: 2 });
    expect(retry?.data.error).toContain('did not finish within its timeout of 1000 ms');
    expect(ended(events, 'nap')).toMatchObject({ ...timedOut('nap', 1000), attempts: 2 });
  });

  it('refuses a timeout outside 1000..3600000 before anything runs, in the caller\'s language', async () => {
    const res = await t.api('POST', '/api/agent/run', { config: auto, workflow: { steps: [{ id: 'x', tool: 'echo', timeoutMs: 50 }] } }, { 'accept-language': 'zh-CN' });
    expect(res.status).toBe(400);
    expect(res.body.error.details).toMatchObject([{ code: 'step_timeout_range', stepId: 'x', field: 'timeoutMs' }]);
    expect(res.body.error.details[0].message).toContain('timeoutMs 必须是 1000 到 3600000');
  });
});
