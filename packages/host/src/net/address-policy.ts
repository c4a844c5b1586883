import { FengYuError } from '@fengyu/protocol';
import { classifyHostName, classifyIp, formatIp, parseIp } from './ip-address';

/**
 * The SSRF policy applied to every hop of an outbound request: which URLs may be fetched at
 * all, and which addresses a host name may resolve to. Throws `web_fetch_blocked`.
 */

export interface AddressPolicy {
  /** `webFetch.allowPrivateNetwork`: when true, only the scheme check applies. */
  allowPrivateNetwork: boolean;
  /**
   * Origins (`scheme://host:port`, as `URL.origin` prints them) exempt from the address check,
   * e.g. the user's own configured search endpoint. Redirects away from them are checked again.
   */
  trustedOrigins?: readonly string[];
}

export interface ResolvedAddress {
  address: string;
  family: 4 | 6;
}

function blocked(url: string, reason: string): FengYuError {
  return new FengYuError('web_fetch_blocked', { url, reason });
}

/** The host part of a URL without IPv6 brackets. */
export function bareHost(url: URL): string {
  const h = url.hostname;
  return h.startsWith('[') && h.endsWith(']') ? h.slice(1, -1) : h;
}

/** True when this hop skips the address checks (private network allowed, or a trusted origin). */
export function isExempt(url: URL, policy: AddressPolicy): boolean {
  return policy.allowPrivateNetwork || (policy.trustedOrigins ?? []).includes(url.origin);
}

/**
 * Checks a URL before any connection: scheme, embedded credentials, and a host that is an IP
 * literal (in any spelling) or a well-known internal name. Returns the parsed URL.
 */
export function checkUrl(raw: string, policy: AddressPolicy): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw blocked(raw, 'not a valid absolute URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw blocked(raw, `scheme ${url.protocol} is not http or https`);
  if (url.username || url.password) throw blocked(raw, 'credentials in the URL are not accepted');
  if (isExempt(url, policy)) return url;
  const host = bareHost(url);
  const ip = parseIp(host);
  const cls = ip ? classifyIp(ip) : classifyHostName(host);
  if (cls !== 'public') throw blocked(raw, `${cls} address ${ip ? formatIp(ip) : host}`);
  return url;
}

/** Checks every address a name resolved to; one private address refuses the whole name. */
export function checkResolved(url: string, host: string, addresses: readonly ResolvedAddress[], policy: AddressPolicy): void {
  if (addresses.length === 0) throw new FengYuError('web_fetch_failed', { url, reason: `${host} did not resolve` });
  if (policy.allowPrivateNetwork) return;
  for (const a of addresses) {
    const ip = parseIp(a.address);
    if (!ip) throw blocked(url, `${host} resolved to an unparseable address ${a.address}`);
    const cls = classifyIp(ip);
    if (cls !== 'public') throw blocked(url, `${host} resolves to ${cls} address ${a.address}`);
  }
}
