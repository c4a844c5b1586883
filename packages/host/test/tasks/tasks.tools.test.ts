import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_OWNER } from '../../src/http/auth';
import { CancelSlot } from '../../src/tasks/canceller';
import { startTestHost, type TestHost } from '../support/host';
import { until } from './helpers';

/** The task tools in the catalog and as plan steps; OTLP push to a real local receiver; cancel races. */

let t: TestHost;
let echoFlow: string;
let slowFlow: string;

async function publish(host: TestHost, name: string, steps: unknown[]): Promise<string> {
  const made = await host.api('POST', '/api/workflows', { name, inputSchema: { type: 'object', properties: { text: { type: 'string' } } }, plan: { steps } });
  expect(made.status, JSON.stringify(made.body)).toBe(200);
  const pub = await host.api('POST', `/api/workflows/${made.body.id}/publish`, { revision: made.body.revision });
  expect(pub.status).toBe(200);
  return made.body.id;
}

beforeAll(async () => {
  // one owner fills every running slot here; the per-owner cap is tested in owner-running-cap.test.ts
  t = await startTestHost({ env: { ...process.env, FENGYU_TASK_OWNER_MAX_RUNNING: '16' } });
  echoFlow = await publish(t, 'echo', [{ id: 'e', tool: 'echo', arguments: { value: 'echo {{inputs.text}}' } }]);
  slowFlow = await publish(t, 'slow', [{ id: 's', tool: 'slow', arguments: { ms: 120000 } }]);
});
afterAll(async () => t?.close());

describe('task tools', () => {
  it('are in the catalog with their effects', async () => {
    const tools = (await t.api('GET', '/api/agent/tools')).body as Array<{ name: string; effect: string }>;
    const effect = (n: string) => tools.find((x) => x.name === n)?.effect;
    expect(effect('task_submit_workflow')).toBe('external');
    for (const n of ['task_output', 'task_wait', 'task_list', 'task_capacity']) expect(effect(n), n).toBe('read');
    expect(effect('task_kill')).toBe('write');
  });

  it('a plan submits a workflow in the background and waits on it', async () => {
    const res = await t.api('POST', '/api/agent/run', {
      config: { planApproval: false, permissionMode: 'full-access' },
      workflow: {
        steps: [
          { id: 'submit', tool: 'task_submit_workflow', arguments: { workflowId: echoFlow, inputs: { text: 'from a plan' } } },
          { id: 'wait', tool: 'task_wait', dependsOn: ['submit'], arguments: { ids: ['{{node.submit.result.taskId}}'], mode: 'all', timeoutMs: 30000 } },
          { id: 'out', tool: 'task_output', dependsOn: ['wait'], arguments: { taskId: '{{node.submit.result.taskId}}', timeoutMs: 0 } },
        ],
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const events = await t.stream(res.body.runId);
    const end = events.at(-1);
    expect(end?.type, JSON.stringify(end?.data)).toBe('complete');
    const steps = Object.fromEntries(events.filter((e) => e.type === 'step_complete').map((e) => [e.data.stepId, e.data.result]));
    expect(steps.submit).toMatchObject({ taskId: expect.any(String), task: { priority: 'normal', kind: 'workflow', workflowId: echoFlow } });
    expect(steps.wait).toMatchObject({ timedOut: false, tasks: [{ state: 'completed' }] });
    expect(steps.out.output.text).toContain('echo from a plan');
    // the submitted task ran with the plan's permission mode
    const task = (await t.api('GET', `/api/agent/tasks/${steps.submit.taskId}`)).body;
    expect((await t.api('GET', `/api/agent/runs/${task.runId}`)).body.config.permissionMode).toBe('full-access');
  });

  it('returns a structured retryable result on exhaustion, lists, reports capacity and kills', async () => {
    const catalog = await t.host.ctx.catalog.snapshot(DEFAULT_OWNER);
    const ctx = { signal: new AbortController().signal, owner: DEFAULT_OWNER, permissionMode: 'full-access' as const, grants: [] };
    const call = (name: string, args: Record<string, unknown>) => catalog.get(name)?.invoke(args, ctx) as Promise<any>;
    const ids: string[] = [];
    for (let i = 0; i < 16 + 24; i++) {
      const r = await call('task_submit_workflow', { workflowId: slowFlow, inputs: {} });
      expect(r.taskId, JSON.stringify(r)).toBeTruthy();
      ids.push(r.taskId);
    }
    const refused = await call('task_submit_workflow', { workflowId: slowFlow, inputs: {} });
    expect(refused).toEqual({ success: false, retryable: true, retryAfterSeconds: 1, capacityScope: 'owner-priority', capacityPriority: 'normal' });
    const cap = await call('task_capacity', {});
    expect(cap).toMatchObject({ running: 16, queued: 24, nonInteractiveLimit: { ownerCount: 24 }, ownedQueueAvailable: 8 });
    const list = await call('task_list', {});
    expect(list.items.filter((x: { queued: boolean }) => x.queued)).toHaveLength(24);
    // bad input is an error the step sees, not a queued task
    await expect(call('task_submit_workflow', { workflowId: 'missing', inputs: {} })).rejects.toMatchObject({ code: 'workflow_not_found' });
    await expect(call('task_wait', { ids: [], mode: 'all' })).rejects.toMatchObject({ code: 'task_field_invalid' });
    const queuedKill = await call('task_kill', { taskId: ids.at(-1) });
    expect(queuedKill).toMatchObject({ state: 'cancelled' });
    const out = await call('task_output', { taskId: ids[0], timeoutMs: 10 });
    expect(out.state).toBe('running');
    const runningKill = await call('task_kill', { taskId: ids[0] });
    expect(runningKill.state).toBe('cancelled');
    for (const id of ids) await call('task_kill', { taskId: id });
    expect(await call('task_capacity', {})).toMatchObject({ running: 0, queued: 0 });
  }, 60_000);
});

describe('race-safe cancellation', () => {
  it('runs a canceller attached after the kill the moment it is attached', async () => {
    const slot = new CancelSlot();
    let before = 0;
    slot.attach(() => {
      before += 1;
    });
    await slot.kill();
    expect(before).toBe(1);
    let late = 0;
    slot.attach(() => {
      late += 1;
    });
    await until(() => late === 1, 'the late canceller to run');
    await slot.kill();
    expect(before).toBe(1);
    expect(slot.signal.aborted).toBe(true);
  });
});

describe('OTLP push', () => {
  let receiver: Server;
  const bodies: any[] = [];
  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let data = '';
      req.on('data', (c) => {
        data += c;
      });
      req.on('end', () => {
        bodies.push({ path: req.url, type: req.headers['content-type'], auth: req.headers['x-test'], body: JSON.parse(data) });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    receiver.listen(0, '127.0.0.1');
    await once(receiver, 'listening');
  });
  afterAll(() => receiver.close());

  it('pushes the same series over OTLP/HTTP when the endpoint is set', async () => {
    const port = (receiver.address() as AddressInfo).port;
    const h = await startTestHost({ env: { ...process.env, OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: `http://127.0.0.1:${port}/v1/metrics`, OTEL_METRIC_EXPORT_INTERVAL: '200', OTEL_EXPORTER_OTLP_HEADERS: 'x-test=yes' } });
    try {
      const flow = await publish(h, 'echo', [{ id: 'e', tool: 'echo', arguments: { value: 1 } }]);
      const task = (await h.api('POST', '/api/agent/tasks', { workflowId: flow, priority: 'interactive' })).body;
      await h.api('GET', `/api/agent/tasks/${task.id}/output?timeoutMs=30000`);
      const names = (b: any): Map<string, any> => new Map(b.body.resourceMetrics[0].scopeMetrics[0].metrics.map((m: any) => [m.name, m]));
      const got = await until(() => {
        const last = bodies.at(-1);
        if (!last) return undefined;
        const m = names(last);
        const d = m.get('fengyu_bg_tasks_dispatched_total');
        const point = d?.sum.dataPoints.find((p: any) => p.attributes.some((a: any) => a.key === 'priority' && a.value.stringValue === 'interactive'));
        return point?.asDouble >= 1 ? last : undefined;
      }, 'a push with the dispatched task');
      expect(got.path).toBe('/v1/metrics');
      expect(got.type).toBe('application/json');
      expect(got.auth).toBe('yes');
      const m = names(got);
      for (const n of ['fengyu_bg_tasks_dispatched_total', 'fengyu_bg_tasks_rejected_total', 'fengyu_bg_task_queue_wait_seconds', 'fengyu_bg_queue_inqueue', 'fengyu_bg_queue_oldest_wait_ms', 'process_cpu_user_seconds_total']) {
        expect(m.has(n), n).toBe(true);
      }
      expect(m.get('fengyu_bg_tasks_dispatched_total').sum).toMatchObject({ isMonotonic: true, aggregationTemporality: 2 });
      const hist = m.get('fengyu_bg_task_queue_wait_seconds').histogram.dataPoints.find((p: any) => p.attributes.some((a: any) => a.value.stringValue === 'interactive') && p.attributes.some((a: any) => a.value.stringValue === 'executed'));
      expect(Number(hist.count)).toBeGreaterThanOrEqual(1);
      expect(hist.bucketCounts).toHaveLength(hist.explicitBounds.length + 1);
      expect(hist.bucketCounts.reduce((a: number, b: string) => a + Number(b), 0)).toBe(Number(hist.count));
      expect(m.get('fengyu_bg_queue_inqueue').gauge.dataPoints).toHaveLength(3);
    } finally {
      await h.close();
    }
  });
});
