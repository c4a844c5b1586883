import { get } from 'node:http';
import { expect, it } from 'vitest';
import { startTestHost } from '../support/host';

/** A host that stops ends its open inbox streams: a browser tab left open never holds the stop. */
it('ends an open inbox stream when the host stops, and the stop completes', async () => {
  const t = await startTestHost();
  const ended = new Promise<string>((resolve, reject) => {
    const req = get(`${t.host.url}/api/inbox/stream?token=${encodeURIComponent(t.host.token)}`, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () => resolve(text));
    });
    req.on('error', reject);
  });
  // the stream is open once its hello arrived
  await new Promise((r) => setTimeout(r, 200));
  await t.close();
  expect(await ended).toContain(': connected');
});
