import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KNOWN_OWNERS } from '../../src/agent/agent.service';
import { auto, startTestHost, type TestHost } from '../support/host';

/**
 * A run's stream is served only to its owner. The owner of a run created here recently is taken
 * from memory, of any other from the database: both answer another owner's stream with
 * `run_not_found`, exactly as a run that does not exist, and a run whose creation failed is never
 * known.
 */

const oneStep = { workflow: { steps: [{ id: 'a', tool: 'echo', arguments: { value: 1 } }] }, config: auto };

async function streamAs(t: TestHost, runId: string, token: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string }> {
  const res = await fetch(`${t.host.url}/api/agent/stream?runId=${runId}`, { headers: { 'x-fengyu-token': token, ...headers } });
  return { status: res.status, text: await res.text() };
}

describe('the owner check of a run stream', () => {
  let t: TestHost;
  let alice: string;
  beforeAll(async () => {
    t = await startTestHost();
    alice = (await t.api('POST', '/api/owners', { name: 'alice' })).body.token;
  });
  afterAll(() => t?.close());

  it('another owner gets run_not_found for a run created here just now (owner from memory), the owner its events', async () => {
    const runId = (await t.api('POST', '/api/agent/run', oneStep)).body.runId as string;
    expect(t.host.ctx.agent.ownerOf(runId)).toBe('default');
    const other = await streamAs(t, runId, alice);
    expect(other.status).toBe(404);
    expect(JSON.parse(other.text).error.code).toBe('run_not_found');
    expect(other.text).not.toContain('event:');
    const zh = await streamAs(t, runId, alice, { 'accept-language': 'zh-CN' });
    expect(JSON.parse(zh.text).error.message).toMatch(/未找到运行/);
    const own = await streamAs(t, runId, t.host.token);
    expect(own.status).toBe(200);
    expect(own.text).toContain('\nevent: complete\n');
  });

  it('the same both ways for a run of the second owner, live (awaiting plan approval)', async () => {
    const res = await t.api('POST', '/api/agent/run', { ...oneStep, config: { planApproval: true } }, { 'x-fengyu-token': alice });
    expect(res.status).toBe(200);
    const runId = res.body.runId as string;
    expect(t.host.ctx.agent.isActive(runId)).toBe(true);
    const other = await streamAs(t, runId, t.host.token);
    expect(other.status).toBe(404);
    expect(JSON.parse(other.text).error.code).toBe('run_not_found');
    const ctl = new AbortController();
    const own = await fetch(`${t.host.url}/api/agent/stream?runId=${runId}`, { headers: { 'x-fengyu-token': alice }, signal: ctl.signal });
    expect(own.status).toBe(200);
    ctl.abort();
    await t.api('POST', `/api/agent/${runId}/cancel`, undefined, { 'x-fengyu-token': alice });
  });

  it('a run whose owner is no longer in memory is checked against the database', async () => {
    const first = (await t.api('POST', '/api/agent/run', oneStep, { 'x-fengyu-token': alice })).body.runId as string;
    for (let made = 0; made < KNOWN_OWNERS; made += 8) {
      const batch = await t.api('POST', '/api/agent/batch', { runs: Array.from({ length: 8 }, () => oneStep) });
      expect(batch.status, JSON.stringify(batch.body)).toBe(200);
    }
    expect(t.host.ctx.agent.ownerOf(first)).toBeUndefined();
    expect((await streamAs(t, first, t.host.token)).status).toBe(404);
    const own = await streamAs(t, first, alice);
    expect(own.status).toBe(200);
    expect(own.text).toContain('\nevent: complete\n');
  });

  it('a run id that does not exist is run_not_found for every owner', async () => {
    for (const token of [t.host.token, alice]) {
      const r = await streamAs(t, '00000000-0000-4000-8000-000000000000', token);
      expect(r.status).toBe(404);
      expect(JSON.parse(r.text).error.code).toBe('run_not_found');
    }
  });

  it('a run whose creating commit failed is never known: its id is run_not_found', async () => {
    const events = t.host.ctx.events;
    const ids: string[] = [];
    const original = events.commitGrouped.bind(events);
    events.commitGrouped = ((runId: string, ...rest: Parameters<typeof events.commitGrouped> extends [string, ...infer R] ? R : never) => {
      ids.push(runId);
      return original(runId, ...rest);
    }) as typeof events.commitGrouped;
    await sql`create trigger refuse_run before insert on runs when new.goal = 'refuse this run' begin select raise(abort, 'refused by the test'); end`.execute(t.host.ctx.db);
    try {
      const res = await t.api('POST', '/api/agent/run', { goal: 'refuse this run', ...oneStep });
      expect(res.status).toBeGreaterThanOrEqual(500);
    } finally {
      events.commitGrouped = original;
      await sql`drop trigger refuse_run`.execute(t.host.ctx.db);
    }
    const refused = ids[0] as string;
    expect(refused).toBeDefined();
    expect(t.host.ctx.agent.ownerOf(refused)).toBeUndefined();
    const r = await streamAs(t, refused, t.host.token);
    expect(r.status).toBe(404);
    expect(JSON.parse(r.text).error.code).toBe('run_not_found');
  });
});

describe('after a restart on the same home', () => {
  it('the owner of a run created by the previous host is read from the database', async () => {
    const home = mkdtempSync(join(tmpdir(), 'fengyu-stream-owner-'));
    try {
      const a = await startTestHost({ keepHome: home });
      const alice = (await a.api('POST', '/api/owners', { name: 'alice' })).body.token as string;
      const runId = (await a.api('POST', '/api/agent/run', oneStep)).body.runId as string;
      await a.stream(runId);
      await a.close();
      const b = await startTestHost({ keepHome: home });
      try {
        expect(b.host.ctx.agent.ownerOf(runId)).toBeUndefined();
        expect((await streamAs(b, runId, alice)).status).toBe(404);
        const own = await streamAs(b, runId, b.host.token);
        expect(own.status).toBe(200);
        expect(own.text).toContain('\nevent: complete\n');
      } finally {
        await b.close();
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});
