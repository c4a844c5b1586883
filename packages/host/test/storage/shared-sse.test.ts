import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';
import { postgresAvailable, startPostgres, type TestPostgres } from '../support/postgres';

/**
 * Two host processes' worth of services on one PostgreSQL database: a subscriber of host A sees
 * every event of a run executing on host B, in order, once; replay by Last-Event-ID is unchanged.
 */

const TOKEN = 'shared-deployment-token-0123456789';

describe.skipIf(!postgresAvailable())('SSE across hosts on a shared PostgreSQL database', () => {
  let server: TestPostgres;
  let a: TestHost;
  let b: TestHost;
  let home: string;

  beforeAll(async () => {
    server = await startPostgres();
    const databaseUrl = await server.createDatabase();
    home = mkdtempSync(join(tmpdir(), 'fengyu-shared-'));
    a = await startTestHost({ keepHome: home, databaseUrl, token: TOKEN, writeHostFile: false });
    b = await startTestHost({ keepHome: home, databaseUrl, token: TOKEN, writeHostFile: false });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await server?.stop();
    rmSync(home, { recursive: true, force: true });
  });

  it('streams a run executing on host B to a subscriber of host A, and replays after a cursor', async () => {
    const steps = Array.from({ length: 6 }, (_, i) => ({ id: `s${i}`, tool: 'slow', arguments: { ms: 150 }, ...(i > 0 ? { dependsOn: [`s${i - 1}`] } : {}) }));
    const run = await b.api('POST', '/api/agent/run', { workflow: { steps }, config: { planApproval: false } });
    expect(run.status, JSON.stringify(run.body)).toBe(200);
    const runId = run.body.runId as string;
    const seen = await a.stream(runId);
    const log = await b.host.ctx.events.read(runId);
    expect(seen.map((e) => Number(e.id))).toEqual(log.map((e) => e.seq));
    expect(seen.at(-1)?.type).toBe('complete');
    expect(seen.filter((e) => e.type === 'step_complete')).toHaveLength(6);
    // the run was executed by B only: A's tools never ran
    expect(a.tools.calls.get('slow') ?? 0).toBe(0);
    expect(b.tools.calls.get('slow')).toBe(6);

    const replay = await a.stream(runId, { lastEventId: 3 });
    expect(replay.map((e) => Number(e.id))).toEqual(log.filter((e) => e.seq > 3).map((e) => e.seq));
  });
});
