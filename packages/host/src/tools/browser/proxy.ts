import http from 'node:http';
import { connect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { type FengYuError, isFengYuError } from '@fengyu/protocol';
import { type AddressPolicy, checkResolved, checkUrl, isExempt, type ResolvedAddress } from '../../net/address-policy';
import { pinnedLookup, type Resolver } from '../../net/http-hop';

/**
 * The one way out of a browser session: a forward proxy on loopback, one per session, that
 * applies the same address policy as `web_fetch` to every connection Chromium opens — plain
 * http requests, https tunnels (CONNECT), and the redirect hops Chromium follows by itself. The
 * host name is resolved once, every address is checked, and the connection goes to a checked
 * address (no DNS-rebinding window); a host named by one of the owner's deny rules is refused
 * before it is resolved. A refused connection is closed and reported.
 */

export interface PolicyProxyDeps {
  policy: () => AddressPolicy;
  resolver: Resolver;
  /**
   * The owner's deny rule that names a URL's host, if any (the WebFetch(domain:…) rules). Asked
   * for every request and tunnel, so a denied host is never contacted by the session: not as a
   * redirect hop Chromium follows itself, not as a sub-resource.
   */
  deniedHost?: (url: string) => Promise<string | undefined>;
  onBlocked: (url: string, reason: string, by: 'policy' | 'rule') => void;
}

export interface PolicyProxy {
  port: number;
  close(): Promise<void>;
}

/** Request headers meant for the proxy itself, never forwarded. */
const PROXY_ONLY = new Set(['proxy-connection', 'proxy-authorization', 'connection', 'keep-alive']);

function reasonOf(e: unknown): string {
  if (isFengYuError(e)) {
    const p = (e as FengYuError).params;
    return typeof p.reason === 'string' ? p.reason : (e as FengYuError).code;
  }
  return e instanceof Error ? e.message : String(e);
}

/** Resolves `host` once, checks every address, and returns the one to connect to. */
async function pinned(url: URL, policy: AddressPolicy, resolver: Resolver): Promise<ResolvedAddress> {
  const exempt = isExempt(url, policy);
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return new Promise((resolve, reject) => {
    pinnedLookup(resolver, (h, all) => checkResolved(url.href, h, all, { ...policy, allowPrivateNetwork: exempt }))(host, { all: false }, (err, address, family) => {
      if (err) reject(err);
      else resolve({ address: address as string, family: family === 6 ? 6 : 4 });
    });
  });
}

/** Header naming the refusal on the proxy's own 403 answer. */
export const BLOCKED_HEADER = 'x-fengyu-blocked';

/**
 * The proxy always answers (a 403 or 502 page) rather than dropping the connection: Chromium
 * takes a dropped proxy connection as a broken proxy and fails every later request.
 */
function answer(res: http.ServerResponse, status: number, reason: string, blocked = false): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...(blocked ? { [BLOCKED_HEADER]: encodeURIComponent(reason) } : {}) });
  res.end(`${blocked ? 'Refused by FengYu' : 'FengYu could not reach the server'}: ${reason}\n`);
}

export function startPolicyProxy(deps: PolicyProxyDeps): Promise<PolicyProxy> {
  const sockets = new Set<Duplex>();
  const track = (s: Duplex) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  };
  const server = http.createServer(async (req, res) => {
    const raw = req.url ?? '';
    let url: URL;
    try {
      url = checkUrl(raw, deps.policy());
      const denial = await deps.deniedHost?.(url.href);
      if (denial) {
        deps.onBlocked(raw, denial, 'rule');
        answer(res, 403, denial, true);
        return;
      }
      const to = await pinned(url, deps.policy(), deps.resolver);
      const headers = Object.fromEntries(Object.entries(req.headers).filter(([k]) => !PROXY_ONLY.has(k.toLowerCase())));
      const upstream = http.request({ host: to.address, family: to.family, port: url.port || 80, method: req.method, path: `${url.pathname}${url.search}`, headers, setHost: false });
      upstream.on('response', (up) => {
        res.writeHead(up.statusCode ?? 502, up.rawHeaders.filter((_, i, a) => i % 2 === 1 || !PROXY_ONLY.has(String(a[i]).toLowerCase())));
        up.pipe(res);
      });
      upstream.on('error', (e) => answer(res, 502, `upstream failed: ${e.message}`));
      req.pipe(upstream);
    } catch (e) {
      const blocked = isFengYuError(e) && (e as FengYuError).code === 'web_fetch_blocked';
      if (blocked) deps.onBlocked(raw, reasonOf(e), 'policy');
      answer(res, blocked ? 403 : 502, reasonOf(e), blocked);
    }
  });
  server.on('connection', track);
  server.on('connect', async (req: http.IncomingMessage, client: Socket, head: Buffer) => {
    track(client);
    const target = `https://${req.url ?? ''}/`;
    try {
      const url = checkUrl(target, deps.policy());
      const denial = await deps.deniedHost?.(url.href);
      if (denial) {
        deps.onBlocked(target, denial, 'rule');
        client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
        return;
      }
      const to = await pinned(url, deps.policy(), deps.resolver);
      const upstream = connect({ host: to.address, port: Number(url.port || 443) }, () => {
        client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
        if (head.length) upstream.write(head);
        upstream.pipe(client);
        client.pipe(upstream);
      });
      track(upstream);
      upstream.on('error', () => {
        if (client.writable) client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      });
      client.on('error', () => upstream.destroy());
    } catch (e) {
      deps.onBlocked(target, reasonOf(e), 'policy');
      client.end('HTTP/1.1 403 Forbidden\r\n\r\n');
    }
  });
  return new Promise((resolve, reject) => {
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const addr = server.address();
      resolve({
        port: typeof addr === 'object' && addr ? addr.port : 0,
        close: () =>
          new Promise<void>((r) => {
            for (const s of sockets) s.destroy();
            server.close(() => r());
          }),
      });
    });
  });
}

