import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { auto, type SseEvent, startTestHost, type TestHost } from '../support/host';

/**
 * web_fetch and web_search over the real host: a local site and a SearXNG-shaped JSON
 * endpoint on loopback, used as steps of supplied-workflow runs.
 */

let t: TestHost;
let site: http.Server;
let siteUrl: string;
const searches: string[] = [];

const PAGE = `<!doctype html><html><head><title>Local Page</title><script>alert('x')</script></head>
<body><nav><a href="/">Home</a></nav><h1>Welcome</h1><p>Some <a href="/docs">docs</a> here.</p></body></html>`;

function listen(server: http.Server): Promise<string> {
  return new Promise((res) => server.listen(0, '127.0.0.1', () => res(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));
}

beforeAll(async () => {
  site = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/page') {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(PAGE);
    } else if (u.pathname === '/hop') {
      res.statusCode = 302;
      res.setHeader('location', '/page');
      res.end();
    } else if (u.pathname === '/searx/search') {
      searches.push(u.search);
      res.setHeader('content-type', 'application/json');
      const q = u.searchParams.get('q') ?? '';
      if (q.includes('metadata')) {
        res.statusCode = 302;
        res.setHeader('location', 'http://169.254.169.254/latest/meta-data/');
        res.end();
        return;
      }
      res.end(
        JSON.stringify({
          query: q,
          results: [
            { title: 'First', url: 'https://one.example/', content: 'snippet one', engine: 'x' },
            { title: 'No URL' },
            { title: 'Script', url: 'javascript:alert(1)', content: 'dropped' },
            { title: 'Second', url: 'https://two.example/path', content: 'snippet two' },
            { title: 'Third', url: 'https://three.example/', content: 'snippet three' },
          ],
        }),
      );
    } else {
      res.statusCode = 404;
      res.end('not here');
    }
  });
  siteUrl = await listen(site);
  t = await startTestHost();
});

afterAll(async () => {
  await t?.close();
  await new Promise<void>((r) => {
    site.closeAllConnections();
    site.close(() => r());
  });
});

async function runStep(tool: string, args: Record<string, unknown>): Promise<{ step: Record<string, unknown>; events: SseEvent[] }> {
  const res = await t.api('POST', '/api/agent/run', { config: auto, workflow: { steps: [{ id: 's', tool, arguments: args }] } });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  const events = await t.stream(res.body.runId as string);
  const step = events.find((e) => e.type === 'step_complete' && e.data.stepId === 's')?.data;
  expect(step, events.map((e) => e.type).join(',')).toBeDefined();
  return { step, events };
}

describe('web built-ins in the host', () => {
  it('lists both tools as read built-ins', async () => {
    const catalog = await t.api('GET', '/api/agent/tools');
    const by = new Map((catalog.body as Array<{ name: string }>).map((e) => [e.name, e]));
    expect(by.get('web_fetch')).toMatchObject({ id: 'builtin:web_fetch', source: 'builtin', effect: 'read', idempotent: true });
    expect(by.get('web_search')).toMatchObject({ id: 'builtin:web_search', source: 'builtin', effect: 'read' });
    const settings = await t.api('GET', '/api/settings');
    expect(settings.body.webFetch).toEqual({ allowPrivateNetwork: false });
    expect(settings.body.webSearch).toBeNull();
  });

  it('refuses loopback by default, with the reason in the step error', async () => {
    const { step } = await runStep('web_fetch', { url: `${siteUrl}/page` });
    expect(step.status).toBe('failed');
    expect(String(step.error)).toContain('loopback address 127.0.0.1');
  });

  it('fetches a local page as text and markdown once allowPrivateNetwork is on', async () => {
    const bad = await t.api('PATCH', '/api/settings', { webFetch: { allowPrivateNetwork: 'yes' } });
    expect(bad.status).toBe(400);
    const ok = await t.api('PATCH', '/api/settings', { webFetch: { allowPrivateNetwork: true } });
    expect(ok.status).toBe(200);
    const { step } = await runStep('web_fetch', { url: `${siteUrl}/hop` });
    expect(step.status).toBe('done');
    expect(step.result).toEqual({
      url: `${siteUrl}/hop`,
      finalUrl: `${siteUrl}/page`,
      status: 200,
      contentType: 'text/html; charset=utf-8',
      title: 'Local Page',
      text: `Welcome\n\nSome docs (${siteUrl}/docs) here.`,
      truncated: false,
    });
    const md = await runStep('web_fetch', { url: `${siteUrl}/page`, format: 'markdown', maxBytes: 100_000 });
    expect((md.step.result as { text: string }).text).toBe(`# Welcome\n\nSome [docs](${siteUrl}/docs) here.`);
    const cut = await runStep('web_fetch', { url: `${siteUrl}/page`, maxBytes: 40 });
    expect((cut.step.result as { truncated: boolean }).truncated).toBe(true);
  });

  it('rejects hostile web_fetch arguments at validation or in the tool', async () => {
    const res = await t.api('POST', '/api/agent/run', { config: auto, workflow: { steps: [{ id: 's', tool: 'web_fetch', arguments: { url: 'x', format: 'pdf' } }] } });
    expect(res.status).toBe(400);
    const file = await runStep('web_fetch', { url: 'file:///etc/passwd' });
    expect(file.step.status).toBe('failed');
    expect(String(file.step.error)).toContain('scheme file:');
  });

  it('lists web_search unavailable until an endpoint is set (a plan using it is refused before it runs), then searches it', async () => {
    const listed = (await t.api('GET', '/api/agent/tools')).body.find((x: { name: string }) => x.name === 'web_search');
    expect(listed).toMatchObject({ available: false, unavailableReason: 'web_search_unconfigured' });
    const refused = await t.api('POST', '/api/agent/run', { goal: 'search', workflow: { steps: [{ id: 's', tool: 'web_search', arguments: { query: 'fengyu' } }] }, config: { planApproval: false } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details.map((d: { code: string }) => d.code)).toEqual(['step_unavailable_tool']);
    const bad = await t.api('PATCH', '/api/settings', { webSearch: { provider: 'google', url: 'gopher://x' } });
    expect(bad.status).toBe(400);
    // the endpoint is on loopback: trusted as the user's own configuration even with private networks refused
    await t.api('PATCH', '/api/settings', { webFetch: { allowPrivateNetwork: false }, webSearch: { url: `${siteUrl}/searx` } });
    expect((await t.api('GET', '/api/agent/tools')).body.find((x: { name: string }) => x.name === 'web_search')).toMatchObject({ available: true });
    const { step } = await runStep('web_search', { query: 'fengyu agent', limit: 2, site: 'example.com', language: 'en' });
    expect(step.status).toBe('done');
    expect(step.result).toEqual({
      query: 'fengyu agent',
      results: [
        { title: 'First', url: 'https://one.example/', snippet: 'snippet one' },
        { title: 'Second', url: 'https://two.example/path', snippet: 'snippet two' },
      ],
    });
    const sent = new URLSearchParams(searches.at(-1));
    expect(sent.get('q')).toBe('site:example.com fengyu agent');
    expect(sent.get('format')).toBe('json');
    expect(sent.get('language')).toBe('en');
  });

  it('does not follow the search endpoint to a private address', async () => {
    const { step } = await runStep('web_search', { query: 'metadata please' });
    expect(step.status).toBe('failed');
    expect(String(step.error)).toContain('metadata address 169.254.169.254');
  });
});
