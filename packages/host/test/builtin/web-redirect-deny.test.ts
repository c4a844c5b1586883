import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { localize } from '@fengyu/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auto, startTestHost, type TestHost } from '../support/host';

/**
 * `WebFetch(domain:…)` deny rules hold on every redirect hop of `web_fetch`, not only on the
 * URL the guard saw: a redirect into a denied host stops before that host is contacted, and the
 * error names the hop and the rule. Two real loopback servers: the first (127.0.0.1) redirects
 * to the second, reached by the name `localhost`.
 */

let t: TestHost;
let front: http.Server;
let back: http.Server;
let frontUrl: string;
let backPort: number;
let backHits = 0;

function listen(server: http.Server, host?: string): Promise<number> {
  return new Promise((res) => server.listen(0, host, () => res((server.address() as AddressInfo).port)));
}

beforeAll(async () => {
  back = http.createServer((_req, res) => {
    backHits += 1;
    res.setHeader('content-type', 'text/plain');
    res.end('secret from the back server');
  });
  backPort = await listen(back); // every local address: `localhost` reaches it over IPv4 or IPv6
  front = http.createServer((req, res) => {
    if (req.url === '/same-target') {
      res.end('front page');
      return;
    }
    res.statusCode = 302;
    res.setHeader('location', req.url === '/same' ? '/same-target' : `http://localhost:${backPort}/secret`);
    res.end();
  });
  frontUrl = `http://127.0.0.1:${await listen(front, '127.0.0.1')}`;
  t = await startTestHost();
  expect((await t.api('PATCH', '/api/settings', { webFetch: { allowPrivateNetwork: true } })).status).toBe(200);
});
afterAll(async () => {
  await t.close();
  front.close();
  back.close();
});

async function fetchStep(url: string, lang = 'en') {
  const started = await t.api('POST', '/api/agent/run', { config: auto, workflow: { steps: [{ id: 'f', tool: 'web_fetch', arguments: { url } }] } }, { 'accept-language': lang });
  expect(started.status).toBe(200);
  await t.stream(started.body.runId);
  const run = (await t.api('GET', `/api/agent/runs/${started.body.runId}`)).body;
  return run.executions.find((x: { stepId: string }) => x.stepId === 'f');
}

describe('WebFetch deny rules on redirect hops', () => {
  it('follows the redirect when no rule names the next host (happy path)', async () => {
    expect((await t.api('PATCH', '/api/settings', { permissions: { deny: [], ask: [], allow: [] } })).status).toBe(200);
    const before = backHits;
    const step = await fetchStep(`${frontUrl}/go`);
    expect(step.status, JSON.stringify(step)).toBe('done');
    expect(step.result.text).toContain('secret from the back server');
    expect(step.result.finalUrl).toBe(`http://localhost:${backPort}/secret`);
    expect(backHits).toBe(before + 1);
  });

  it('stops at a hop into a denied host, before contacting it, naming the hop and the rule', async () => {
    expect((await t.api('PATCH', '/api/settings', { permissions: { deny: ['WebFetch(domain:localhost)'], ask: [], allow: [] } })).status).toBe(200);
    const before = backHits;
    const step = await fetchStep(`${frontUrl}/go`);
    expect(step.status).toBe('failed');
    const error = JSON.stringify(step.error);
    expect(error).toContain('Refused to follow the redirect');
    expect(error).toContain(`http://localhost:${backPort}/secret`);
    expect(error).toContain(`${frontUrl}/go`);
    expect(error).toContain('WebFetch(domain:localhost)');
    expect(backHits).toBe(before);
    // a redirect that stays on an allowed host is still followed under the same rules
    const same = await fetchStep(`${frontUrl}/same`);
    expect(same.status, JSON.stringify(same)).toBe('done');
    expect(same.result.text).toContain('front page');
  });

  it('the refusal has an English and a Chinese message naming the hop and the rule', () => {
    const params = { from: `${frontUrl}/go`, url: 'http://localhost:1/secret', rule: 'WebFetch(domain:localhost)' };
    for (const locale of ['en', 'zh-CN'] as const) {
      const text = localize('web_fetch_redirect_denied', params, locale);
      for (const v of Object.values(params)) expect(text).toContain(v);
    }
    expect(localize('web_fetch_redirect_denied', params, 'zh-CN')).toContain('拒绝跟随');
  });
});
