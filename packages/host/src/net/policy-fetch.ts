import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { type AddressPolicy, bareHost, checkResolved, checkUrl, isExempt } from './address-policy';
import { pinnedLookup } from './http-hop';
import { type Resolver, systemResolver } from './safe-fetch';

/**
 * A streaming `fetch` for long-lived clients (MCP over HTTP) under the same SSRF address policy
 * as `web_fetch`: the URL is checked before connecting (scheme, credentials, IP literals and
 * internal names), every address DNS returns is checked inside the socket's lookup (so the
 * socket connects only to a checked address), and redirects are not followed. The response
 * body streams (server-sent events stay open).
 */

export type PolicyFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>;

export function createPolicyFetch(policy: AddressPolicy, resolver: Resolver = systemResolver): PolicyFetch {
  return async (input, init = {}) => {
    const request = input instanceof Request ? input : undefined;
    const url = checkUrl(request ? request.url : String(input), policy);
    const exempt = isExempt(url, policy);
    const headers = new Headers(init.headers ?? request?.headers);
    const method = init.method ?? request?.method ?? 'GET';
    const rawBody = init.body ?? (request ? await request.arrayBuffer() : undefined);
    const body = rawBody === undefined || rawBody === null ? undefined : Buffer.from(await new Response(rawBody as BodyInit).arrayBuffer());
    const signal = init.signal ?? request?.signal ?? undefined;
    const client = url.protocol === 'https:' ? https : http;
    return new Promise<Response>((resolve, reject) => {
      const flat: Record<string, string> = {};
      headers.forEach((v, k) => {
        flat[k] = v;
      });
      if (body) flat['content-length'] = String(body.length);
      const req = client.request(
        {
          protocol: url.protocol,
          hostname: bareHost(url),
          port: url.port || undefined,
          path: `${url.pathname}${url.search}`,
          method,
          headers: flat,
          agent: false,
          lookup: pinnedLookup(resolver, (host, addresses) => checkResolved(url.href, host, addresses, { ...policy, allowPrivateNetwork: exempt })),
          ...(signal ? { signal } : {}),
        },
        (res) => {
          const out = new Headers();
          for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) out.set(k, Array.isArray(v) ? v.join(', ') : v);
          const status = res.statusCode ?? 502;
          const nullBody = status === 204 || status === 304 || method === 'HEAD';
          if (nullBody) res.resume();
          resolve(new Response(nullBody ? null : (Readable.toWeb(res) as ReadableStream), { status, statusText: res.statusMessage ?? '', headers: out }));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  };
}
