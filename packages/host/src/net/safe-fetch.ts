import { FengYuError, isFengYuError } from '@fengyu/protocol';
import { lookup } from 'node:dns/promises';
import { type AddressPolicy, checkResolved, checkUrl, isExempt, type ResolvedAddress } from './address-policy';
import { type Resolver, sendHop } from './http-hop';

/**
 * The one outbound HTTP client for tools (STYLE: one implementation of a security seam).
 * http/https only, bounded in time (one deadline over every hop) and bytes (decoded body
 * capped while streaming), redirects followed by hand and each hop checked again, and the SSRF
 * guard applied to the literal host and to every address DNS returns, with the socket pinned to
 * the checked address.
 */

export type { Resolver } from './http-hop';

export interface SafeFetchRequest {
  url: string;
  method?: 'GET' | 'HEAD' | 'POST';
  headers?: Record<string, string>;
  body?: string | Buffer;
  signal?: AbortSignal;
  /** Deadline for the whole exchange, redirects included. Default 30 s. */
  timeoutMs?: number;
  /** Cap on the decoded body; the rest is not read and `truncated` is set. Default 5 MiB. */
  maxBytes?: number;
  /** Default and maximum 5. */
  maxRedirects?: number;
  allowPrivateNetwork?: boolean;
  /** See `AddressPolicy.trustedOrigins`. */
  trustedOrigins?: readonly string[];
  /** The tool on whose behalf the request runs (named in the cancel error). Default web_fetch. */
  tool?: string;
  /**
   * Called before each redirect is followed, with the next hop's URL and the one that sent it;
   * throwing stops the fetch before the next hop is contacted (e.g. a deny rule names its host).
   */
  beforeRedirect?: (next: URL, from: URL) => void | Promise<void>;
}

export interface SafeFetchResponse {
  url: string;
  finalUrl: string;
  status: number;
  headers: Record<string, string>;
  contentType: string;
  body: Buffer;
  truncated: boolean;
  /** Every URL visited before `finalUrl`. */
  redirects: string[];
}

export type SafeFetch = (req: SafeFetchRequest) => Promise<SafeFetchResponse>;

export interface SafeFetchDeps {
  /** Name resolution (tests inject one); default `dns.lookup(host, {all: true})`. */
  resolver?: Resolver;
  userAgent?: string;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_BYTES = 5 * 1024 * 1024;
export const MAX_REDIRECTS = 5;

export const systemResolver: Resolver = async (hostname) => {
  const all = await lookup(hostname, { all: true, verbatim: true });
  return all.map((a) => ({ address: a.address, family: a.family === 6 ? 6 : 4 }));
};

const SENSITIVE = ['authorization', 'cookie', 'proxy-authorization'];

function nextRequest(status: number, method: string, body: Buffer | undefined): { method: string; body: Buffer | undefined } {
  if (status === 303 && method !== 'HEAD') return { method: 'GET', body: undefined };
  if ((status === 301 || status === 302) && method === 'POST') return { method: 'GET', body: undefined };
  return { method, body };
}

function failure(url: string, e: unknown, deadline: AbortSignal, req: SafeFetchRequest): FengYuError {
  const caller = req.signal;
  // An abort wins over whatever error the aborted socket produced on the way down.
  if (caller?.aborted) return new FengYuError('tool_cancelled', { name: req.tool ?? 'web_fetch' }, undefined, { cause: e });
  if (deadline.aborted) return new FengYuError('web_fetch_failed', { url, reason: 'timed out' }, undefined, { cause: e });
  if (isFengYuError(e)) return e as FengYuError;
  const err = e as NodeJS.ErrnoException;
  const reason = err?.code ? `${err.code}${err.message ? `: ${err.message}` : ''}` : String(err?.message ?? e);
  return new FengYuError('web_fetch_failed', { url, reason }, undefined, { cause: e });
}

export function createSafeFetch(deps: SafeFetchDeps = {}): SafeFetch {
  const resolver = deps.resolver ?? systemResolver;
  const userAgent = deps.userAgent ?? 'FengYu/0.1 (web_fetch)';

  return async function safeFetch(req: SafeFetchRequest): Promise<SafeFetchResponse> {
    const policy: AddressPolicy = { allowPrivateNetwork: req.allowPrivateNetwork === true, trustedOrigins: req.trustedOrigins };
    const maxRedirects = Math.min(Math.max(0, req.maxRedirects ?? MAX_REDIRECTS), MAX_REDIRECTS);
    const maxBytes = Math.max(1, req.maxBytes ?? DEFAULT_MAX_BYTES);
    const deadline = AbortSignal.timeout(req.timeoutMs ?? DEFAULT_TIMEOUT_MS);
    const signal = req.signal ? AbortSignal.any([req.signal, deadline]) : deadline;
    let headers: Record<string, string> = {
      'user-agent': userAgent,
      'accept-encoding': 'gzip, deflate, br',
      accept: '*/*',
      ...Object.fromEntries(Object.entries(req.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
    };
    let method: string = req.method ?? 'GET';
    let body: Buffer | undefined = req.body === undefined ? undefined : Buffer.from(req.body);
    const redirects: string[] = [];
    let current = req.url;

    for (;;) {
      if (signal.aborted) throw failure(current, signal.reason, deadline, req);
      const url = checkUrl(current, policy);
      const exempt = isExempt(url, policy);
      const checkAddresses = (host: string, addresses: ResolvedAddress[]) =>
        checkResolved(url.href, host, addresses, { ...policy, allowPrivateNetwork: exempt });
      const hopHeaders = body ? { ...headers, 'content-length': String(body.length) } : headers;
      let hop: Awaited<ReturnType<typeof sendHop>>;
      try {
        hop = await sendHop({ url, method, headers: hopHeaders, body, signal, maxBytes, resolver, checkAddresses });
      } catch (e) {
        throw failure(url.href, e, deadline, req);
      }
      if (hop.location === undefined) {
        return {
          url: req.url,
          finalUrl: url.href,
          status: hop.status,
          headers: hop.headers,
          contentType: hop.headers['content-type'] ?? '',
          body: hop.body,
          truncated: hop.truncated,
          redirects,
        };
      }
      if (redirects.length >= maxRedirects) {
        throw new FengYuError('web_fetch_failed', { url: req.url, reason: `more than ${maxRedirects} redirects` });
      }
      redirects.push(url.href);
      let next: URL;
      try {
        next = new URL(hop.location, url);
      } catch {
        throw new FengYuError('web_fetch_failed', { url: url.href, reason: `invalid redirect location ${hop.location}` });
      }
      if (req.beforeRedirect) await req.beforeRedirect(next, url);
      if (next.origin !== url.origin) headers = Object.fromEntries(Object.entries(headers).filter(([k]) => !SENSITIVE.includes(k)));
      const hadBody = body !== undefined;
      ({ method, body } = nextRequest(hop.status, method, body));
      if (hadBody && body === undefined) delete headers['content-type'];
      current = next.href;
    }
  };
}
