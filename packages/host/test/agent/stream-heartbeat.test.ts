import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';

/**
 * A run's stream that stays open (the run waits at its plan review) carries a `: keep-alive`
 * comment every `sseHeartbeatMs` (15 s unless set; set short here, so the test waits for one beat
 * instead of 15 s) after its replay; a stream whose replay ends it has ended without one.
 */

let t: TestHost;
beforeAll(async () => {
  t = await startTestHost({ sseHeartbeatMs: 200 });
});
afterAll(async () => t?.close());

/** The stream's raw text until `until` matches it or the server ends the response. */
function rawStream(runId: string, until: RegExp): Promise<{ text: string; ended: boolean }> {
  const url = new URL(`${t.host.url}/api/agent/stream?runId=${runId}`);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, path: `${url.pathname}${url.search}`, headers: { 'x-fengyu-token': t.host.token, accept: 'text/event-stream' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => {
        text += c;
        if (until.test(text)) {
          req.destroy();
          resolve({ text, ended: false });
        }
      });
      res.on('end', () => resolve({ text, ended: true }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the stream heartbeat', () => {
  it('keeps a stream that stays open alive after its replay, and a replay that ends the stream ends it', async () => {
    const waiting = await t.api('POST', '/api/agent/run', { workflow: { steps: [{ id: 'a', tool: 'echo', arguments: { value: 1 } }] } });
    expect(waiting.status).toBe(200);
    const open = await rawStream(waiting.body.runId as string, /: keep-alive\n\n/);
    expect(open.ended).toBe(false);
    expect(open.text).toContain('event: plan_approval_requested\n');
    expect(open.text.indexOf(': keep-alive')).toBeGreaterThan(open.text.indexOf('event: plan_approval_requested\n'));

    const done = await t.api('POST', '/api/agent/run', { workflow: { steps: [{ id: 'a', tool: 'echo', arguments: { value: 2 } }] }, config: { planApproval: false, permissionMode: 'full-access' } });
    await t.waitFor(done.body.runId as string, 'complete');
    const ended = await rawStream(done.body.runId as string, /: keep-alive\n\n/);
    expect(ended.ended).toBe(true);
    expect(ended.text).toContain('event: complete\n');
    expect(ended.text).not.toContain(': keep-alive');
  }, 60_000);
});
