import { readFileSync } from 'node:fs';
import type { RunEvent } from '@fengyu/protocol';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOLD_MS } from '../../src/events/event-log';
import { LoopTurn } from '../../src/events/turn';
import type { InvokeRequest } from '../../src/plugins/worker-manager';
import { auto, startTestHost, type TestHost } from '../support/host';
import { waitUntil } from '../support/processes';
import { packProbe } from './helpers';

/**
 * A serial chain of plugin steps: a worker's answer arrives in a later turn of the event loop,
 * and is then handled like one given at once. The step's end is queued, the next step's start
 * joins it in one group commit, and the next call (a retry-safe one) leaves before that commit is
 * written. A call that may take effect still leaves only once its start (and everything before
 * it) is written, and the log reads in order whatever the grouping. The transitions of retry-safe
 * calls answered in later turns are held: the next answers' join them, for up to a slice.
 */

let t: TestHost;
/** The events of each publish burst (a commit's, or a group commit's, events are published together). */
const bursts: RunEvent[][] = [];
/** What the log of the run held, for the call's own step, at the instant each call was handed to its worker. */
const atCall = new Map<string, string[]>();

beforeAll(async () => {
  const probe = await packProbe({
    aiTools: [
      { name: 'probe_echo', description: 'Echoes its input.', method: 'echo', effect: 'read', idempotent: true },
      { name: 'probe_touch', description: 'Takes effect (for this test).', method: 'noop', effect: 'write' },
      { name: 'probe_quiet', description: 'Runs a shell script and reports nothing meanwhile.', method: 'shell', effect: 'read', timeoutSeconds: 30 },
    ],
  });
  t = await startTestHost({
    sandbox: 'auto',
    // A loaded machine may take more than a slice between an answer and the next call, and the run
    // then lets the loop turn first (by design); this host never slices, so what is tested is the grouping.
    beforeDomains: (core) => {
      (core.events as unknown as { turn: LoopTurn }).turn = new LoopTurn(undefined, 60_000);
    },
  });
  const res = await t.upload('/api/plugins', readFileSync(probe), 'plugin.fyp');
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  const log = t.host.ctx.events;
  const publish = log.publish.bind(log);
  let open: RunEvent[] | undefined;
  log.publish = (e: RunEvent) => {
    if (!open) {
      open = [];
      bursts.push(open);
      queueMicrotask(() => {
        open = undefined;
      });
    }
    open.push(e);
    publish(e);
  };
  // the run whose calls are made: the one that queued a step's start last. Publication comes a turn
  // after a commit, so under load a run's next call can leave before any of its events is published.
  const commitGrouped = log.commitGrouped.bind(log);
  log.commitGrouped = (id, events, ...rest) => {
    if (events.some((e) => e.type === 'step_start')) liveRun = id;
    return commitGrouped(id, events, ...rest);
  };
  const workers = t.host.ctx.plugins.workers;
  const invoke = workers.invoke.bind(workers);
  workers.invoke = (req: InvokeRequest) => {
    calls += 1;
    const stepId = (req.params as { value?: string }).value ?? (req.params as { step?: string }).step ?? '?';
    // a prepared read: the log as it is at this instant, before the request is written
    void log.read(liveRun).then((events) => atCall.set(stepId, events.map((e) => `${e.type}${'stepId' in e ? `:${e.stepId}` : ''}`)));
    return invoke(req);
  };
}, 120_000);
afterAll(async () => {
  await t?.close();
});

let runId = '';
/** Calls handed to a worker so far. */
let calls = 0;
/** The run that queued a step's start last (the one whose calls are made). */
let liveRun = '';

describe('a chain of plugin steps', () => {
  it('writes a step end and the next start in one commit, sends a retry-safe call before it, and a write call only after its start', async () => {
    // e0: a run's first step end is written in its own turn and published before the next step starts
    const steps = [
      { id: 'e0', tool: 'probe_echo', arguments: { value: 'e0' } },
      { id: 'e1', tool: 'probe_echo', arguments: { value: 'e1' }, dependsOn: ['e0'] },
      { id: 'e2', tool: 'probe_echo', arguments: { value: 'e2' }, dependsOn: ['e1'] },
      { id: 'w', tool: 'probe_touch', arguments: {}, dependsOn: ['e2'] },
      { id: 'e3', tool: 'probe_echo', arguments: { value: 'e3' }, dependsOn: ['w'] },
      { id: 'e4', tool: 'probe_echo', arguments: { value: 'e4' }, dependsOn: ['e3'] },
    ];
    const res = await t.api('POST', '/api/agent/run', { config: auto, workflow: { steps } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    runId = res.body.runId;
    const events = await t.stream(runId);
    expect(events.at(-1)?.type, JSON.stringify(events.at(-1))).toBe('complete');

    // the log reads in order: each step's transitions, and a step's start after its dependency's end
    const seqs = events.map((e) => Number(e.id));
    expect([...seqs].sort((p, q) => p - q)).toEqual(seqs);
    const order = events.filter((e) => e.type === 'step_start' || e.type === 'step_complete').map((e) => `${e.type}:${e.data.stepId}`);
    expect(order).toEqual(steps.flatMap((s) => [`step_start:${s.id}`, `step_complete:${s.id}`]));
    for (const s of steps) {
      const mine = events.filter((e) => e.data.stepId === s.id && e.type !== 'audit').map((e) => (e.type === 'tool' ? `tool:${e.data.phase}` : e.type));
      expect(mine).toEqual(['step_start', 'tool:call', 'tool:result', 'step_complete']);
    }

    // a worker's answer is handled like one given at once: its end and the next start share a commit
    const burstOf = (type: string, stepId: string) => bursts.findIndex((b) => b.some((e) => e.runId === runId && e.type === type && (e as { stepId?: string }).stepId === stepId));
    expect(burstOf('step_complete', 'e1')).toBeGreaterThanOrEqual(0);
    expect(burstOf('step_start', 'e2')).toBe(burstOf('step_complete', 'e1'));
    // the run's first end is not grouped with what follows it: published first, and e1's call left only after it
    expect(burstOf('step_complete', 'e0')).toBeGreaterThanOrEqual(0);
    expect(burstOf('step_start', 'e1')).toBeGreaterThan(burstOf('step_complete', 'e0'));
    expect(atCall.get('e1')).toContain('step_complete:e0');
    expect(burstOf('step_start', 'e4')).toBe(burstOf('step_complete', 'e3'));

    // e2's call left before e1's end was written (its own start is written after the call, with that end)
    expect(atCall.get('e2')).toBeDefined();
    expect(atCall.get('e2')).toContain('step_complete:e0');
    expect(atCall.get('e2')).not.toContain('step_complete:e1');
    expect(atCall.get('e2')).not.toContain('step_start:e2');
  });

  it('a call that may take effect leaves only once its start, and the end before it, are written', async () => {
    // the write step's call: its params are empty, recorded under '?'
    const seen = atCall.get('?');
    expect(seen).toBeDefined();
    expect(seen).toContain('step_complete:e2');
    expect(seen).toContain('step_start:w');
  });

  it('a plugin step whose end cannot be written fails the run, and the next start (sent with it) is not written', async () => {
    // a real write failure: SQLite refuses the end of step e1, queued with e2's start
    await sql`create trigger refuse_plugin_end before insert on run_events when new.type = 'step_complete' and json_extract(new.data, '$.stepId') = 'e1' begin select raise(abort, 'the disk refused the write'); end`.execute(t.host.ctx.db);
    try {
      const steps = [
        { id: 'e1', tool: 'probe_echo', arguments: { value: 'e1' } },
        { id: 'e2', tool: 'probe_echo', arguments: { value: 'e2' }, dependsOn: ['e1'] },
        { id: 'e3', tool: 'probe_echo', arguments: { value: 'e3' }, dependsOn: ['e2'] },
      ];
      const res = await t.api('POST', '/api/agent/run', { config: auto, workflow: { steps } });
      expect(res.status).toBe(200);
      const failed = res.body.runId as string;
      const streamed = await t.stream(failed);
      expect(streamed.at(-1)?.type).toBe('error');
      const stored = await t.host.ctx.events.read(failed);
      const types = stored.map((e) => `${e.type}${'stepId' in e ? `:${e.stepId}` : ''}`);
      expect(types).toContain('step_start:e1');
      expect(types).not.toContain('step_complete:e1');
      expect(types.filter((x) => x.endsWith(':e2') || x.endsWith(':e3'))).toEqual([]);
      expect(stored.at(-1)?.type).toBe('error');
      const run = await t.api('GET', `/api/agent/runs/${failed}`);
      expect(run.body.status ?? run.body.run?.status).toBe('failed');
    } finally {
      await sql`drop trigger refuse_plugin_end`.execute(t.host.ctx.db);
    }
  });
});

/** A step's events as `type:stepId` (tool events with their phase), in log order. */
const named = (events: Array<{ type: string; data: Record<string, unknown> }>) => events.map((e) => `${e.type}${e.type === 'tool' ? `.${e.data.phase}` : ''}${e.data.stepId ? `:${e.data.stepId}` : ''}`);

describe('a chain of plugin steps whose transitions are held across turns', () => {
  it('writes the held ends and starts of several answers in one commit with the next one not held, in order, each call leaving before them', async () => {
    const log = t.host.ctx.events;
    // nothing is written by the hold's timer here: what a group holds is decided by what is not held
    log.holdMs = 60_000;
    try {
      // e0: the run's first end is never held (see the first test); the holds begin after it
      const steps = [
        { id: 'e0', tool: 'probe_echo', arguments: { value: 'e0' } },
        { id: 'e1', tool: 'probe_echo', arguments: { value: 'e1' }, dependsOn: ['e0'] },
        { id: 'e2', tool: 'probe_echo', arguments: { value: 'e2' }, dependsOn: ['e1'] },
        { id: 'e3', tool: 'probe_echo', arguments: { value: 'e3' }, dependsOn: ['e2'] },
        { id: 'w', tool: 'probe_touch', arguments: {}, dependsOn: ['e3'] },
        { id: 'e4', tool: 'probe_echo', arguments: { value: 'e4' }, dependsOn: ['w'] },
        { id: 'e5', tool: 'probe_echo', arguments: { value: 'e5' }, dependsOn: ['e4'] },
        { id: 'e6', tool: 'probe_echo', arguments: { value: 'e6' }, dependsOn: ['e5'] },
      ];
      const res = await t.api('POST', '/api/agent/run', { config: auto, workflow: { steps } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const held = res.body.runId as string;
      const events = await t.stream(held);
      expect(events.at(-1)?.type, JSON.stringify(events.at(-1))).toBe('complete');

      // the stream is the log, in order, once each
      const stored = await log.read(held);
      expect(events.map((e) => Number(e.id))).toEqual(stored.map((e) => e.seq));
      expect(stored.map((e) => e.seq)).toEqual(stored.map((_, i) => i + 1));
      const order = named(events).filter((x) => /^step_(start|complete):/.test(x));
      expect(order).toEqual(steps.flatMap((s) => [`step_start:${s.id}`, `step_complete:${s.id}`]));

      // e2's end, e3's start and end, and w's start (not held: its call may take effect) in one commit.
      // (e1 starts after e0's end is published, in the loop's check phase: its answer may arrive before
      // that turn ends, and its end is then written at the turn's end instead of held.)
      const burstOf = (type: string, stepId: string) => bursts.findIndex((b) => b.some((e) => e.runId === held && e.type === type && (e as { stepId?: string }).stepId === stepId));
      const first = burstOf('step_complete', 'e2');
      expect(first).toBeGreaterThanOrEqual(0);
      for (const [type, id] of [['step_start', 'e3'], ['step_complete', 'e3'], ['step_start', 'w']]) expect(burstOf(type as string, id as string), `${type}:${id}`).toBe(first);
      // e4's end to e6's end with the run's end (the last step's end is written with it)
      const end = bursts.findIndex((b) => b.some((e) => e.runId === held && e.type === 'complete'));
      for (const [type, id] of [['step_complete', 'e4'], ['step_start', 'e5'], ['step_complete', 'e6']]) expect(burstOf(type as string, id as string), `${type}:${id}`).toBe(end);

      // e3's call left while e2's end was still held
      expect(atCall.get('e3')).toContain('step_complete:e0');
      expect(atCall.get('e3')).not.toContain('step_complete:e2');
      expect(atCall.get('e3')).not.toContain('step_start:e3');
      // the write call left only once its start, and every held transition before it, was written
      const atWrite = atCall.get('?');
      for (const x of ['step_complete:e1', 'step_complete:e2', 'step_complete:e3', 'step_start:w']) expect(atWrite).toContain(x);
    } finally {
      log.holdMs = HOLD_MS;
    }
  });

  it('writes held transitions within the hold when no other commit follows (a long read call after a read step)', async () => {
    const log = t.host.ctx.events;
    // longer than a cold turn takes here, shorter than the call: what writes them is the hold's timer
    log.holdMs = 500;
    try {
      const steps = [
        { id: 'e1', tool: 'probe_echo', arguments: { value: 'e1' } },
        { id: 'slow', tool: 'probe_quiet', arguments: { script: 'sleep 4' }, dependsOn: ['e1'] },
      ];
      const before = calls;
      const res = await t.api('POST', '/api/agent/run', { config: auto, workflow: { steps } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const id = res.body.runId as string;
      const stored = async () => named((await log.read(id)).map((e) => ({ type: e.type, data: e as unknown as Record<string, unknown> })));
      expect(await waitUntil(() => calls >= before + 2, 20_000), 'the slow call left').toBe(true);
      // e1's end and the slow step's start are held, and nothing that is not held follows until the
      // call ends: the hold's timer writes them while the call runs
      let seen: string[] = [];
      for (let i = 0; i < 400 && !seen.includes('step_start:slow'); i++) {
        await new Promise((r) => setTimeout(r, 25));
        seen = await stored();
      }
      expect(seen).toContain('step_start:slow');
      expect(seen).toContain('step_complete:e1');
      expect(seen).not.toContain('step_complete:slow');
      const events = await t.stream(id);
      expect(events.at(-1)?.type).toBe('complete');
    } finally {
      log.holdMs = HOLD_MS;
    }
  });

  it('a held end does not hold its run back when another run queued a commit in the same turn', async () => {
    const log = t.host.ctx.events;
    log.holdMs = 60_000;
    const workers = t.host.ctx.plugins.workers;
    const invoke = workers.invoke;
    // p2's answer is handled in a turn in which another run (the first test's) queues a commit
    workers.invoke = (req: InvokeRequest) =>
      invoke(req).then((answer) => {
        if ((req.params as { value?: string }).value === 'p2') void log.commitGrouped(runId, [{ type: 'audit', kind: 'test' } as never], undefined, undefined, false, true);
        return answer;
      });
    try {
      // p0: the run's first end is never held; p1 starts after its publication (in the loop's
      // check phase, so its answer may come before that turn ends and its end is then not held)
      const steps = [
        { id: 'p0', tool: 'probe_echo', arguments: { value: 'p0' } },
        { id: 'p1', tool: 'probe_echo', arguments: { value: 'p1' }, dependsOn: ['p0'] },
        { id: 'p2', tool: 'probe_echo', arguments: { value: 'p2' }, dependsOn: ['p1'] },
        { id: 'p3', tool: 'probe_echo', arguments: { value: 'p3' }, dependsOn: ['p2'] },
      ];
      const res = await t.api('POST', '/api/agent/run', { config: auto, workflow: { steps } });
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const events = await t.stream(res.body.runId);
      expect(events.at(-1)?.type).toBe('complete');
      // p3's call left while p2's end was held (a run waiting for it would wait for the hold)
      expect(atCall.get('p3')).toContain('step_complete:p0');
      expect(atCall.get('p3')).not.toContain('step_complete:p2');
    } finally {
      workers.invoke = invoke;
      log.holdMs = HOLD_MS;
    }
  });

  it('a subscriber that connects while held transitions wait sees every event once and in order', async () => {
    const log = t.host.ctx.events;
    const n = 40;
    const steps = Array.from({ length: n }, (_, i) => ({ id: `c${i}`, tool: 'probe_echo', arguments: { value: `c${i}` }, ...(i ? { dependsOn: [`c${i - 1}`] } : {}) }));
    const before = calls;
    const res = await t.api('POST', '/api/agent/run', { config: auto, workflow: { steps } });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const id = res.body.runId as string;
    const streams = [t.stream(id)];
    for (const k of [5, 15, 25]) {
      await waitUntil(() => calls >= before + k, 20_000);
      streams.push(t.stream(id));
    }
    const stored = (await Promise.all(streams)).map((events) => events.map((e) => Number(e.id)));
    const log_ = (await log.read(id)).map((e) => e.seq);
    expect(log_).toEqual(log_.map((_, i) => i + 1));
    for (const seqs of stored) expect(seqs).toEqual(log_);
  });
});
