import { isFengYuError } from '@fengyu/protocol';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ResolvedAddress } from './address-policy';
import { createSafeFetch, type Resolver } from './safe-fetch';

/** A real loopback server whose routes the tests script; counts every request it receives. */
function startServer(handler: http.RequestListener) {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    handler(req, res);
  });
  return new Promise<{ origin: string; port: number; hits: string[]; close: () => Promise<void> }>((resolve) => {
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        origin: `http://127.0.0.1:${port}`,
        port,
        hits,
        close: () =>
          new Promise((r) => {
            server.closeAllConnections();
            server.close(() => r());
          }),
      });
    });
  });
}

async function codeOf(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'resolved';
  } catch (e) {
    return isFengYuError(e) ? e.code : `raw:${String(e)}`;
  }
}

/** A resolver scripted per name; records every name it was asked for. */
function scriptedResolver(table: Record<string, ResolvedAddress[]>) {
  const asked: string[] = [];
  const resolver: Resolver = async (name) => {
    asked.push(name);
    const hit = table[name];
    if (!hit) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
    return hit;
  };
  return { resolver, asked };
}

let target: Awaited<ReturnType<typeof startServer>>;
let other: Awaited<ReturnType<typeof startServer>>;

beforeAll(async () => {
  other = await startServer((req, res) => {
    res.setHeader('content-type', 'text/plain');
    res.end(`other saw authorization=${req.headers.authorization ?? 'none'}`);
  });
  target = await startServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://x');
    if (u.pathname === '/hello') {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(`<title>Hi</title>host=${req.headers.host}`);
    } else if (u.pathname === '/big') {
      res.end('x'.repeat(100_000));
    } else if (u.pathname === '/bomb') {
      res.setHeader('content-encoding', 'gzip');
      res.end(gzipSync(Buffer.alloc(20 * 1024 * 1024)));
    } else if (u.pathname === '/gz') {
      res.setHeader('content-encoding', 'gzip');
      res.end(gzipSync(Buffer.from('compressed hello')));
    } else if (u.pathname === '/hang') {
      // never answers
    } else if (u.pathname === '/chain') {
      const n = Number(u.searchParams.get('n'));
      if (n <= 0) res.end('end of chain');
      else {
        res.statusCode = 302;
        res.setHeader('location', `/chain?n=${n - 1}`);
        res.end();
      }
    } else if (u.pathname === '/to') {
      res.statusCode = Number(u.searchParams.get('status') ?? 302);
      res.setHeader('location', u.searchParams.get('url') ?? '/');
      res.end();
    } else if (u.pathname === '/echo-method') {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => res.end(`${req.method} ${body}`));
    } else {
      res.statusCode = 404;
      res.end('nope');
    }
  });
});

afterAll(async () => {
  await target.close();
  await other.close();
});

describe('safeFetch with the private network allowed', () => {
  const fetch = createSafeFetch();

  it('fetches, reports status and content type', async () => {
    const r = await fetch({ url: `${target.origin}/hello`, allowPrivateNetwork: true });
    expect(r.status).toBe(200);
    expect(r.contentType).toBe('text/html; charset=utf-8');
    expect(r.body.toString()).toContain('<title>Hi</title>');
    expect(r.truncated).toBe(false);
    expect(r.finalUrl).toBe(`${target.origin}/hello`);
  });

  it('caps the body and reports truncation', async () => {
    const r = await fetch({ url: `${target.origin}/big`, allowPrivateNetwork: true, maxBytes: 1000 });
    expect(r.body.length).toBe(1000);
    expect(r.truncated).toBe(true);
  });

  it('decodes gzip and caps the decoded size (a 20 MiB bomb stops at the cap)', async () => {
    const small = await fetch({ url: `${target.origin}/gz`, allowPrivateNetwork: true });
    expect(small.body.toString()).toBe('compressed hello');
    const bomb = await fetch({ url: `${target.origin}/bomb`, allowPrivateNetwork: true, maxBytes: 64 * 1024 });
    expect(bomb.body.length).toBe(64 * 1024);
    expect(bomb.truncated).toBe(true);
  });

  it('follows up to 5 redirects and refuses the 6th', async () => {
    const ok = await fetch({ url: `${target.origin}/chain?n=5`, allowPrivateNetwork: true });
    expect(ok.body.toString()).toBe('end of chain');
    expect(ok.redirects).toHaveLength(5);
    expect(await codeOf(fetch({ url: `${target.origin}/chain?n=6`, allowPrivateNetwork: true }))).toBe('web_fetch_failed');
  });

  it('turns POST into GET on 303 and drops credentials on a cross-origin redirect', async () => {
    const r = await fetch({
      url: `${target.origin}/to?status=303&url=${encodeURIComponent('/echo-method')}`,
      method: 'POST',
      body: 'payload',
      allowPrivateNetwork: true,
    });
    expect(r.body.toString()).toBe('GET ');
    const cross = await fetch({
      url: `${target.origin}/to?url=${encodeURIComponent(`${other.origin}/`)}`,
      headers: { Authorization: 'Bearer secret' },
      allowPrivateNetwork: true,
    });
    expect(cross.body.toString()).toBe('other saw authorization=none');
  });

  it('times out a server that never answers', async () => {
    expect(await codeOf(fetch({ url: `${target.origin}/hang`, allowPrivateNetwork: true, timeoutMs: 300 }))).toBe('web_fetch_failed');
  });

  it('reports a caller cancel as tool_cancelled', async () => {
    const ac = new AbortController();
    const p = fetch({ url: `${target.origin}/hang`, allowPrivateNetwork: true, signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    expect(await codeOf(p)).toBe('tool_cancelled');
  });

  it('connects to the address its resolver returned, resolving once per hop', async () => {
    const { resolver, asked } = scriptedResolver({ 'local.test': [{ address: '127.0.0.1', family: 4 }] });
    const r = await createSafeFetch({ resolver })({ url: `http://local.test:${target.port}/hello`, allowPrivateNetwork: true });
    expect(r.body.toString()).toContain(`host=local.test:${target.port}`);
    expect(asked).toEqual(['local.test']);
  });
});

describe('the SSRF guard (private network not allowed)', () => {
  const port = () => target.port;
  const literalCorpus = [
    () => `http://127.0.0.1:${port()}/hello`,
    () => `http://localhost:${port()}/hello`,
    () => `http://LOCALHOST.:${port()}/hello`,
    () => `http://[::1]:${port()}/hello`,
    () => `http://[::ffff:127.0.0.1]:${port()}/hello`,
    () => `http://0x7f000001:${port()}/hello`,
    () => `http://2130706433:${port()}/hello`,
    () => `http://017700000001:${port()}/hello`,
    () => `http://127.1:${port()}/hello`,
    () => `http://0.0.0.0:${port()}/hello`,
    () => 'http://10.0.0.1/',
    () => 'http://172.16.5.4/',
    () => 'http://192.168.0.1/',
    () => 'http://100.64.0.1/',
    () => 'http://169.254.169.254/latest/meta-data/',
    () => 'http://[fd00:ec2::254]/',
    () => 'http://metadata.google.internal/computeMetadata/v1/',
    () => 'http://[fe80::1]/',
    () => 'http://[fc00::1]/',
    () => 'http://224.0.0.1/',
    () => 'file:///etc/passwd',
    () => 'ftp://example.com/',
    () => 'gopher://example.com/',
    () => 'http://user:pw@example.com/',
    () => 'not a url',
  ];

  it.each(literalCorpus.map((f, i) => [i, f] as const))('refuses literal #%i without connecting', async (_i, make) => {
    const before = target.hits.length;
    const { resolver, asked } = scriptedResolver({});
    expect(await codeOf(createSafeFetch({ resolver })({ url: make() }))).toBe('web_fetch_blocked');
    expect(target.hits.length).toBe(before);
    expect(asked).toEqual([]);
  });

  const dnsCorpus: Array<[string, ResolvedAddress[]]> = [
    ['internal.test', [{ address: '10.0.0.5', family: 4 }]],
    ['meta.test', [{ address: '169.254.169.254', family: 4 }]],
    ['v6loop.test', [{ address: '::1', family: 6 }]],
    ['mapped.test', [{ address: '::ffff:127.0.0.1', family: 6 }]],
    ['mixed.test', [{ address: '93.184.216.34', family: 4 }, { address: '127.0.0.1', family: 4 }]],
    ['loop.test', [{ address: '127.0.0.1', family: 4 }]],
  ];

  it.each(dnsCorpus)('refuses %s after DNS resolution, before connecting', async (name, addresses) => {
    const before = target.hits.length;
    const { resolver, asked } = scriptedResolver({ [name]: addresses });
    expect(await codeOf(createSafeFetch({ resolver })({ url: `http://${name}:${target.port}/hello` }))).toBe('web_fetch_blocked');
    expect(asked).toEqual([name]);
    expect(target.hits.length).toBe(before);
  });

  it('re-checks every redirect hop from an allowed origin', async () => {
    const { resolver } = scriptedResolver({ 'internal.test': [{ address: '10.1.2.3', family: 4 }] });
    const fetch = createSafeFetch({ resolver });
    const trustedOrigins = [target.origin];
    const ok = await fetch({ url: `${target.origin}/hello`, trustedOrigins });
    expect(ok.status).toBe(200);
    for (const dest of [`${other.origin}/`, 'http://169.254.169.254/', 'http://internal.test/', `http://[::1]:${other.port}/`, 'http://0x7f000001/']) {
      const before = other.hits.length;
      const url = `${target.origin}/to?url=${encodeURIComponent(dest)}`;
      expect(await codeOf(fetch({ url, trustedOrigins })), dest).toBe('web_fetch_blocked');
      expect(other.hits.length).toBe(before);
    }
  });
});
