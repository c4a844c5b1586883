import { connect } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestHost, type TestHost } from '../support/host';

/**
 * A run's live frames are written per publication, not per event: the events one commit publishes
 * reach the client in one HTTP chunk, each chunk holds whole frames, and the frames are the same,
 * in the same order, as the run's log replayed afterwards.
 */

let t: TestHost;
beforeAll(async () => {
  t = await startTestHost();
});
afterAll(async () => t?.close());

/**
 * The stream's HTTP chunks (chunked transfer encoding read off the socket) until the response
 * ends; `onOpen` is called once the replay has shown the plan waiting for approval, and `opened`
 * is how many chunks had arrived then.
 */
function rawChunks(runId: string, onOpen: () => void): Promise<{ chunks: string[]; opened: number }> {
  const url = new URL(t.host.url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    let buf = Buffer.alloc(0);
    let headersDone = false;
    let opened = -1;
    const chunks: string[] = [];
    socket.on('connect', () => {
      socket.write(`GET /api/agent/stream?runId=${runId} HTTP/1.1\r\nHost: ${url.host}\r\nX-FengYu-Token: ${t.host.token}\r\nAccept: text/event-stream\r\n\r\n`);
    });
    socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (!headersDone) {
        const h = buf.indexOf('\r\n\r\n');
        if (h < 0) return;
        expect(buf.subarray(0, h).toString('latin1')).toMatch(/transfer-encoding: chunked/i);
        buf = buf.subarray(h + 4);
        headersDone = true;
      }
      for (;;) {
        const line = buf.indexOf('\r\n');
        if (line < 0) return;
        const size = Number.parseInt(buf.subarray(0, line).toString('latin1'), 16);
        if (buf.length < line + 2 + size + 2) return;
        if (size === 0) {
          socket.destroy();
          return resolve({ chunks, opened });
        }
        chunks.push(buf.subarray(line + 2, line + 2 + size).toString('utf8'));
        buf = buf.subarray(line + 2 + size + 2);
        if (opened < 0 && chunks.join('').includes('event: plan_approval_requested\n')) {
          opened = chunks.length;
          onOpen();
        }
      }
    });
    socket.on('error', reject);
  });
}

const frames = (text: string) => text.split('\n\n').filter((f) => f.startsWith('id:') || f.includes('\nevent:') || f.startsWith('event:'));

describe('the stream writes a publication at once', () => {
  it('sends the events of one commit in one chunk, whole frames only, the same frames as the log', async () => {
    const run = await t.api('POST', '/api/agent/run', {
      workflow: { steps: [{ id: 'a', tool: 'echo', arguments: { value: 1 } }, { id: 'b', tool: 'echo', arguments: { value: 2 }, dependsOn: ['a'] }] },
      config: { permissionMode: 'full-access' },
    });
    expect(run.status).toBe(200);
    const runId = run.body.runId as string;
    const { chunks, opened } = await rawChunks(runId, () => {
      void t.api('POST', `/api/agent/${runId}/approve`, {});
    });
    expect(opened).toBeGreaterThan(0);
    // the frames sent live, after the replay that showed the plan waiting
    const live = chunks.slice(opened).filter((c) => c.includes('event:'));
    expect(live.length).toBeGreaterThan(0);
    // each chunk ends at a frame's end
    for (const c of live) expect(c.endsWith('\n\n')).toBe(true);
    const sent = frames(chunks.join(''));
    expect(sent.at(-1)).toContain('event: complete');
    // at least one chunk carries several events (a commit publishes a step's end with what follows)
    expect(live.some((c) => frames(c).length > 1)).toBe(true);
    // the frames are the log's, in order, each once
    const replay = await rawChunks(runId, () => {});
    expect(frames(replay.chunks.join(''))).toEqual(sent);
  }, 60_000);
});
