import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auto, startTestHost, type TestHost } from '../support/host';

let t: TestHost;
beforeAll(async () => {
  t = await startTestHost();
});
afterAll(async () => {
  t.tools.probe = undefined;
  await t.close();
});

describe('a step call and its start commit', () => {
  it('a retry-safe call overlaps its start commit, yet what it reports is logged after the start; a write call starts only once its start is written', async () => {
    // the step's own events already in the log when its tool is invoked
    const logged = new Map<string, string[]>();
    t.tools.probe = (name, ctx) => {
      // a prepared read on SQLite: the log as it is at this instant
      void t.host.ctx.events.read(ctx.runId as string).then((events) => {
        logged.set(name, events.filter((e) => (e as { stepId?: string }).stepId === ctx.stepId).map((e) => e.type));
      });
    };
    const res = await t.api('POST', '/api/agent/run', {
      config: auto,
      workflow: {
        steps: [
          { id: 'r', tool: 'report_start' },
          { id: 'w', tool: 'write_note', arguments: { text: 'x' }, dependsOn: ['r'] },
          { id: 'r2', tool: 'report_start', dependsOn: ['w'] },
        ],
      },
    });
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const events = await t.stream(res.body.runId);
    expect(events.at(-1)?.type).toBe('complete');
    // the write step's start (and its call event) were durable before the tool ran
    expect(logged.get('write_note')).toEqual(expect.arrayContaining(['step_start', 'tool']));
    for (const stepId of ['r', 'r2']) {
      const mine = events.filter((e) => e.data.stepId === stepId).map((e) => (e.type === 'audit' ? `audit:${e.data.kind}` : e.type === 'tool' ? `tool:${e.data.phase}` : e.type));
      expect(mine.filter((x) => x !== 'audit:permission')).toEqual(['step_start', 'tool:call', 'audit:progress', 'tool:result', 'step_complete']);
    }
    const seqs = events.map((e) => Number(e.id));
    expect([...seqs].sort((p, q) => p - q)).toEqual(seqs);
  });
});
