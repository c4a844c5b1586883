import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EventSource } from 'eventsource';
import { afterAll, describe, expect, it } from 'vitest';
import { auto, startTestHost, type TestHost } from '../support/host';

/**
 * The end of a run's SSE stream: a cursor at or past the last event of an ended run gets an
 * answer at once (never a connection left open), and the replay of a resumed run carries the
 * terminal event that preceded the resume (no seq gap) and still ends after the real end.
 */

const TYPES = ['run_created', 'plan_ready', 'plan_approval_requested', 'plan_approved', 'step_start', 'tool', 'step_complete', 'audit', 'status', 'resumed', 'complete', 'error', 'cancelled', 'interrupted'];

interface Frame {
  type: string;
  seq: number;
}

/**
 * A real EventSource that keeps reading until the *server* ends the response (the client never
 * closes on a terminal event itself). Rejects when the server keeps the stream open.
 */
function untilServerEnds(t: TestHost, runId: string, lastEventId?: number, onFrame?: (f: Frame) => void): Promise<Frame[]> {
  return new Promise((resolve, reject) => {
    const url = `${t.host.url}/api/agent/stream?runId=${runId}&token=${encodeURIComponent(t.host.token)}${lastEventId !== undefined ? `&lastEventId=${lastEventId}` : ''}`;
    const es = new EventSource(url);
    const got: Frame[] = [];
    const guard = setTimeout(() => {
      es.close();
      reject(new Error(`the stream of ${runId} stayed open; got ${got.map((g) => g.type).join(',')}`));
    }, 15_000);
    // a connection error is also dispatched as `error`; a run's `error` frame carries data
    for (const type of TYPES)
      es.addEventListener(type, (m: MessageEvent) => {
        if (typeof m.data !== 'string') return;
        got.push({ type, seq: Number(m.lastEventId) });
        onFrame?.({ type, seq: Number(m.lastEventId) });
      });
    es.onerror = () => {
      clearTimeout(guard);
      es.close();
      resolve(got);
    };
  });
}

/** The raw HTTP answer to a reconnect carrying `Last-Event-ID`; fails instead of hanging. */
async function reconnect(t: TestHost, runId: string, lastEventId: number): Promise<{ status: number; body: string }> {
  const res = await fetch(`${t.host.url}/api/agent/stream?runId=${runId}`, {
    headers: { 'x-fengyu-token': t.host.token, 'last-event-id': String(lastEventId) },
    signal: AbortSignal.timeout(15_000),
  });
  return { status: res.status, body: await res.text() };
}

const hosts: TestHost[] = [];
const homes: string[] = [];
afterAll(async () => {
  for (const h of hosts) await h.close().catch(() => {});
  for (const d of homes) rmSync(d, { recursive: true, force: true });
});

describe('SSE stream end of a finished run', () => {
  it('a cursor at or past the last event of an ended run is answered at once; one before it replays the rest and ends', async () => {
    const t = await startTestHost();
    hosts.push(t);
    const { body } = await t.api('POST', '/api/agent/run', { config: auto, workflow: { steps: [{ id: 'a', tool: 'noop' }] } });
    const runId = body.runId as string;
    const all = await untilServerEnds(t, runId);
    expect(all.at(-1)?.type).toBe('complete');
    const last = all.at(-1)?.seq as number;

    // hostile: a reconnect at the end, or past it, must not hold a connection open
    for (const cursor of [last, last + 1, last + 1000]) {
      const raw = await reconnect(t, runId, cursor);
      expect(raw.status).toBe(204);
      expect(raw.body).toBe('');
    }
    expect(await untilServerEnds(t, runId, last)).toEqual([]);

    // happy: a cursor before the end replays what follows, then the server ends the stream
    const rest = await untilServerEnds(t, runId, last - 1);
    expect(rest).toEqual([{ type: 'complete', seq: last }]);
    const raw = await reconnect(t, runId, last - 2);
    expect(raw.status).toBe(200);
    expect(raw.body.match(/^id: \d+$/gm)).toEqual([`id: ${last - 1}`, `id: ${last}`]);
  });

  it('a resumed run replays its interrupted event before resumed, without a seq gap, and ends after the real end', async () => {
    const home = mkdtempSync(join(tmpdir(), 'fengyu-stream-'));
    homes.push(home);
    const a = await startTestHost({ keepHome: home });
    hosts.push(a);
    // a run with a step running when the host stops is interrupted (one waiting at a gate would be parked)
    const started = await a.api('POST', '/api/agent/run', { config: { permissionMode: 'full-access', planApproval: false }, workflow: { steps: [{ id: 'a', tool: 'slow', arguments: { ms: 60_000 } }] } });
    const runId = started.body.runId as string;
    await a.waitFor(runId, 'step_start');
    await a.close(); // a graceful stop records the running run as interrupted

    const b = await startTestHost({ keepHome: home });
    hosts.push(b);
    const before = await untilServerEnds(b, runId);
    expect(before.at(-1)?.type).toBe('interrupted');
    expect((await reconnect(b, runId, before.at(-1)?.seq as number)).status).toBe(204);

    expect((await b.api('POST', `/api/agent/runs/${runId}/resume`)).status).toBe(200);
    // the resumed run pauses for plan review; wait for that gate
    for (let i = 0; i < 500 && (await b.api('GET', `/api/agent/runs/${runId}`)).body.status !== 'awaiting_plan_approval'; i++) await new Promise((r) => setTimeout(r, 20));
    expect((await b.api('POST', `/api/agent/${runId}/approve`, { steps: [{ id: 'a', tool: 'slow', arguments: { ms: 1 } }] })).status).toBe(200);

    const all = await untilServerEnds(b, runId);
    const types = all.map((f) => f.type);
    expect(types.indexOf('interrupted')).toBeGreaterThan(-1);
    expect(types.indexOf('interrupted')).toBeLessThan(types.indexOf('resumed'));
    expect(types.at(-1)).toBe('complete');
    expect(all.map((f) => f.seq)).toEqual(all.map((_, i) => i + 1));
    const detail = await b.api('GET', `/api/agent/runs/${runId}`);
    expect(all.map((f) => f.seq)).toEqual(detail.body.events.map((e: { seq: number }) => e.seq));
    // a replay from a cursor before the interruption carries it too
    const interruptedSeq = all.find((f) => f.type === 'interrupted')?.seq as number;
    const tail = await untilServerEnds(b, runId, interruptedSeq - 1);
    expect(tail[0]).toEqual({ type: 'interrupted', seq: interruptedSeq });
    expect(tail.at(-1)?.type).toBe('complete');
  });

  it('in the host that ran it, a cancelled run resumed and waiting replays its cancel and resume and stays open until the real end', async () => {
    const t = await startTestHost();
    hosts.push(t);
    const started = await t.api('POST', '/api/agent/run', { config: { permissionMode: 'full-access' }, workflow: { steps: [{ id: 'a', tool: 'echo', arguments: { value: 'x' } }] } });
    const runId = started.body.runId as string;
    await t.waitFor(runId, 'plan_approval_requested');
    expect((await t.api('POST', `/api/agent/${runId}/cancel`)).status).toBe(200);
    for (let i = 0; i < 500 && (await t.api('GET', `/api/agent/runs/${runId}`)).body.status !== 'cancelled'; i++) await new Promise((r) => setTimeout(r, 20));
    expect((await t.api('POST', `/api/agent/runs/${runId}/resume`)).status).toBe(200);
    for (let i = 0; i < 500 && (await t.api('GET', `/api/agent/runs/${runId}`)).body.status !== 'awaiting_plan_approval'; i++) await new Promise((r) => setTimeout(r, 20));
    // the whole log so far is a replay that ends in a cancel, then a resume: the stream stays open
    // for the plan's approval, given once the replay has shown the resumed run's gate
    let gates = 0;
    const all = await untilServerEnds(t, runId, undefined, (f) => {
      if (f.type === 'plan_approval_requested' && ++gates === 2) void t.api('POST', `/api/agent/${runId}/approve`, {});
    });
    const types = all.map((f) => f.type);
    expect(types.indexOf('cancelled')).toBeGreaterThan(-1);
    expect(types.indexOf('cancelled')).toBeLessThan(types.indexOf('resumed'));
    expect(types.at(-1)).toBe('complete');
    const detail = await t.api('GET', `/api/agent/runs/${runId}`);
    expect(all.map((f) => f.seq)).toEqual(detail.body.events.filter((e: { type: string }) => TYPES.includes(e.type)).map((e: { seq: number }) => e.seq));
  });
});
